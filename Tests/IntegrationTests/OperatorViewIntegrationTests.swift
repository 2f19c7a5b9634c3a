import DocRouteTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The operator's view against a real docrouted: `status` fields and table, the progress bar,
/// and the node-exporter textfile.
@Suite(.serialized) struct OperatorViewIntegrationTests {
    static let molecules = DeliveryIntegrationTests.molecules
    static let textviewer = "org.docroute.textviewer"
    static let pdb = DeliveryIntegrationTests.pdb

    static func json(_ text: String) -> [String: Any]? {
        guard let data = text.data(using: .utf8) else { return nil }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    }

    /// The textfile's samples, or nil while it is missing or not valid Prometheus text.
    static func samples(_ path: String) -> [String: Double]? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return try? PrometheusText.parse(text)
    }

    @Test func metricsTextfileCountsDeliveriesQuarantinesRescansAndAcknowledgements() throws {
        let metricsFolder = "metrics"
        var harness: DaemonHarness!
        harness = try DaemonHarness(extraConfig: "metrics_textfile = \"PLACEHOLDER\"")
        defer { harness.remove() }
        let path = harness.root + "/" + metricsFolder + "/docroute.prom"
        try FileManager.default.createDirectory(atPath: harness.root + "/" + metricsFolder, withIntermediateDirectories: true)
        let config = try String(contentsOfFile: harness.configPath, encoding: .utf8).replacingOccurrences(of: "PLACEHOLDER", with: path)
        try config.write(toFile: harness.configPath, atomically: true, encoding: .utf8)
        // Waiting before start: the start-up scan finds it.
        try harness.drop("early.pdb", Self.pdb)
        try harness.start()
        for index in 1...2 { try harness.drop("\(index)abc.pdb", Self.pdb) }
        try harness.drop("mystery.zzz", [0x00, 0xFF, 0x13, 0x37, 0x00, 0x01, 0x02, 0x03])
        #expect(harness.waitForInboxDrained(), "\(harness.daemonLog)")

        let delivered = #"docroute_deliveries_total{handler="\#(Self.molecules)",outcome="delivered"}"#
        var samples: [String: Double] = [:]
        // Written at most once a second while things happen: wait for the write after the last one.
        let counted = harness.waitUntil(timeout: 10) {
            samples = Self.samples(path) ?? [:]
            return samples[delivered] == 3 && samples[#"docroute_quarantined_total{reason="no_handler"}"#] == 1
        }
        #expect(counted, "\((try? String(contentsOfFile: path, encoding: .utf8)) ?? "no file")")
        #expect(samples[#"docroute_delivered_bytes_total{handler="\#(Self.molecules)"}"#] == Double(3 * Self.pdb.count))
        #expect(samples[#"docroute_rescans_total{reason="startup"}"#] == 1)
        #expect(samples[#"docroute_rescans_total{reason="overflow"}"#] == 0)
        #expect(samples["docroute_delivery_latency_seconds_count"] == 3)
        #expect(samples["docroute_intake_waiting"] == 0)
        // Every family says what it measures: a HELP line right before its TYPE.
        let lines = ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        let types = lines.indices.filter { lines[$0].hasPrefix("# TYPE ") }
        #expect(!types.isEmpty)
        for index in types {
            let name = lines[index].split(separator: " ")[2]
            #expect(index > 0 && lines[index - 1].hasPrefix("# HELP \(name) ") && lines[index - 1].count > "# HELP \(name) ".count, "\(lines[index])")
        }
        // Replaced atomically: no temporary beside it, readable by a collector of another user.
        #expect(try FileManager.default.contentsOfDirectory(atPath: harness.root + "/" + metricsFolder) == ["docroute.prom"])
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o644)

        // The handler takes all three.
        let client = try LineClient(path: harness.socket)
        defer { client.close() }
        try client.send(["type": "subscribe", "id": "1", "bundleIdentifier": Self.molecules])
        #expect(client.readMessage()?["pending"] as? Int == 3)
        for _ in 0..<3 {
            let event = try #require(client.readMessage())
            let id = try #require(event["deliveryID"] as? String)
            try client.send(["type": "ack", "deliveryID": id, "handled": true])
        }
        let acknowledged = #"docroute_acknowledgements_total{handler="\#(Self.molecules)",outcome="handled"}"#
        #expect(harness.waitUntil(timeout: 10) {
            samples = Self.samples(path) ?? [:]
            return samples[acknowledged] == 3
        }, "\((try? String(contentsOfFile: path, encoding: .utf8)) ?? "no file")")
        #expect(samples[#"docroute_ack_latency_seconds_count{handler="\#(Self.molecules)"}"#] == 3)
        #expect(samples[#"docroute_unacknowledged{handler="\#(Self.molecules)"}"#] == 0)

        // Idle: the file is not rewritten (no timer).
        usleep(1_200_000)
        var before = stat()
        stat(path, &before)
        usleep(2_000_000)
        var after = stat()
        stat(path, &after)
        #expect(before.st_ino == after.st_ino && before.st_mtim.tv_nsec == after.st_mtim.tv_nsec && before.st_mtim.tv_sec == after.st_mtim.tv_sec,
                "an idle daemon leaves its metrics file alone")
    }

    @Test func statusShowsWaitingQuarantinedDeliveredTodayAndLastError() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        // The text viewer's sandbox is named but missing: its deliveries fail and say why.
        let manifest = harness.handlers + "/textviewer.plist"
        var text = try String(contentsOfFile: manifest, encoding: .utf8)
        let end = try #require(text.range(of: "</dict>", options: .backwards))
        text.replaceSubrange(end, with: "<key>DocRouteContainer</key><string>\(harness.root)/no-such-sandbox</string>\n</dict>")
        try text.write(toFile: manifest, atomically: true, encoding: .utf8)
        try harness.start()
        try harness.drop("1abc.pdb", Self.pdb)
        try harness.drop("2abc.pdb", Self.pdb, mailbox: "Mail")
        try harness.drop("mystery.zzz", [0x00, 0xFF, 0x13, 0x37, 0x00, 0x01, 0x02, 0x03])
        try harness.drop("notes.txt", Array("a line of plain text\n".utf8))

        var report: [String: Any] = [:]
        let settled = harness.waitUntil(timeout: 15) {
            guard let status = try? CtlProcess.run(["status", "--socket", harness.socket, "--json"]),
                  let reply = Self.json(status.output) else { return false }
            report = reply
            let handlers = reply["handlers"] as? [[String: Any]] ?? []
            let viewer = handlers.first { $0["bundleIdentifier"] as? String == Self.textviewer }
            let molecules = handlers.first { $0["bundleIdentifier"] as? String == Self.molecules }
            return viewer?["lastError"] is String && molecules?["deliveredToday"] as? Int == 2
        }
        #expect(settled, "\(report)")
        let handlers = report["handlers"] as? [[String: Any]] ?? []
        let molecules = try #require(handlers.first { $0["bundleIdentifier"] as? String == Self.molecules })
        #expect(molecules["pending"] as? Int == 2)
        #expect(molecules["inFlight"] as? Int == 0)
        #expect(molecules["lastError"] == nil, "nothing failed for it")
        let viewer = try #require(handlers.first { $0["bundleIdentifier"] as? String == Self.textviewer })
        let lastError = try #require(viewer["lastError"] as? String)
        #expect(lastError.contains("no-such-sandbox"), "\(lastError)")
        #expect(viewer["deliveredToday"] as? Int == 0)
        let inbox = try #require((report["inboxes"] as? [[String: Any]])?.first)
        #expect(inbox["quarantined"] as? Int == 1, "\(inbox)")
        // The text file failed for good or waits for a retry; either way it was not delivered.
        #expect((inbox["waiting"] as? Int).map { (0...1).contains($0) } == true, "\(inbox)")
        #expect(report["deliveredToday"] as? Int == 2)

        let human = try CtlProcess.run(["status", "--socket", harness.socket])
        #expect(human.status == 0, "\(human.error)")
        let rows = human.output.split(separator: "\n").map(String.init)
        let header = try #require(rows.first { $0.hasPrefix("HANDLER") })
        #expect(header.contains("DELIVERED TODAY") && header.contains("DECLINED") && header.contains("LAST ERROR"), "\(human.output)")
        let moleculesRow = rows.first { $0.hasPrefix(Self.molecules) }?.split(separator: " ").map(String.init) ?? []
        #expect(moleculesRow == [Self.molecules, "no", "2", "0", "2", "0", "-"], "\(human.output)")
        #expect(rows.first { $0.hasPrefix(Self.textviewer) }?.contains("no-such-sandbox") == true, "\(human.output)")
        #expect(rows.contains { $0.hasPrefix("INBOX") && $0.contains("WAITING") && $0.contains("QUARANTINED") }, "\(human.output)")
        let inboxRow = rows.first { $0.hasPrefix(harness.inbox) }?.split(separator: " ").map(String.init) ?? []
        #expect(inboxRow.first == harness.inbox && inboxRow.dropFirst(3).first == "1", "\(human.output)")
        #expect(inboxRow.last == "Mail", "mailboxes last: \(human.output)")
    }

    @Test func aHandlerThatExitsWithoutSubscribingShowsAsItsLastError() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        let manifest = harness.handlers + "/molecules.plist"
        var text = try String(contentsOfFile: manifest, encoding: .utf8)
        let end = try #require(text.range(of: "</dict>", options: .backwards))
        text.replaceSubrange(end, with: "<key>DocRouteLaunchCommand</key><array><string>/bin/false</string></array>\n</dict>")
        try text.write(toFile: manifest, atomically: true, encoding: .utf8)
        try harness.start()
        try harness.drop("1abc.pdb", Self.pdb)
        var lastError: String?
        let shown = harness.waitUntil(timeout: 15) {
            guard let status = try? CtlProcess.run(["status", "--socket", harness.socket, "--json"]),
                  let reply = Self.json(status.output) else { return false }
            let handlers = reply["handlers"] as? [[String: Any]] ?? []
            lastError = handlers.first { $0["bundleIdentifier"] as? String == Self.molecules }?["lastError"] as? String
            return lastError != nil
        }
        #expect(shown, "\(harness.daemonLog)")
        #expect(lastError == "launched, but exited with status 1 without subscribing")
    }

    @Test func watchAsksAgainUntilInterrupted() throws {
        let server = try CannedStatusServer(reply: #"{"type":"status","id":"ID","handlers":[],"inboxes":[]}"#)
        defer { server.stop() }
        let ctl = try CtlProcess(["status", "--socket", server.path, "--json", "--watch", "--interval", "0.2"])
        let lines = ctl.waitForLines(3, timeout: 15)
        #expect(ctl.isRunning, "still watching")
        ctl.stop()
        #expect(lines.count >= 3, "\(lines) \(ctl.standardError)")
        #expect(lines.allSatisfy { $0 == #"{"type":"status","handlers":[],"inboxes":[]}"# }, "\(lines)")
    }

    @Test func aProgressObjectShowsAsABarWithRateAndEstimate() throws {
        let reply = #"{"type":"status","id":"ID","handlers":[],"inboxes":[],"daemon":"docrouted/test","#
            + #""progress":{"phase":"scan","done":5120,"total":10000,"ratePerSecond":2300.4,"etaSeconds":2.1}}"#
        let server = try CannedStatusServer(reply: reply)
        defer { server.stop() }
        let human = try CtlProcess.run(["status", "--socket", server.path])
        #expect(human.status == 0, "\(human.error)")
        let lines = human.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.dropFirst().first == "scan  [########........] 5,120/10,000  2,300/s  ETA 3s", "\(human.output)")

        let drain = #"{"type":"status","id":"ID","handlers":[],"inboxes":[],"#
            + #""progress":{"phase":"drain","handler":"com.example.a","done":0,"total":40000,"ratePerSecond":0}}"#
        let second = try CannedStatusServer(reply: drain)
        defer { second.stop() }
        let waiting = try CtlProcess.run(["status", "--socket", second.path])
        #expect(waiting.output.split(separator: "\n").dropFirst().first == "drain com.example.a  [................] 0/40,000  0/s",
                "no estimate without a rate: \(waiting.output)")
    }
}

/// A Unix socket that answers the `status` requests of one connection with a fixed reply (its `ID` replaced by the
/// request's id): lets the CLI's rendering be checked against any reply.
final class CannedStatusServer: @unchecked Sendable {
    let folder: TemporaryFolder
    let path: String
    let fd: Int32
    let thread: Thread

    init(reply: String) throws {
        folder = try TemporaryFolder("canned")
        path = folder.string("s.sock")
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() where index < raw.count - 1 { raw[index] = byte }
        }
        let socketPath = path
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(fd, 4) == 0 else { throw HarnessError("bind \(socketPath): \(errno)") }
        let listener = fd
        thread = Thread {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            defer { close(connection) }
            // Every request on the connection gets the reply (`--watch` asks again and again).
            var received: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                while let newline = received.firstIndex(of: 0x0A) {
                    let request = (try? JSONSerialization.jsonObject(with: Data(received[..<newline]))) as? [String: Any]
                    received.removeSubrange(...newline)
                    let line = reply.replacingOccurrences(of: #""ID""#, with: "\"\(request?["id"] as? String ?? "")\"") + "\n"
                    _ = Array(line.utf8).withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                }
                let count = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { return }
                received += chunk[..<count]
            }
        }
        thread.start()
    }

    func stop() {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
        folder.remove()
    }
}
