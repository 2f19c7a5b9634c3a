import DocRouteTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Clients that misbehave on the socket (issues #5 and #8): cut lines, a subscriber that never
/// reads, subscribers that drop or never acknowledge, connection storms. None of them holds up
/// anyone else, and every document is acknowledged exactly once in the end.
@Suite(.serialized) struct MisbehavingClientIntegrationTests {
    static let molecules = "com.sunsetlakesoftware.molecules"
    static let viewer = "org.docroute.textviewer"
    static let pdb = DeliveryIntegrationTests.pdb

    /// Subscribes, retrying while the daemon has not yet seen the previous connection close.
    func subscribe(_ harness: DaemonHarness, _ bundle: String = molecules) throws -> (LineClient, [String: Any]) {
        let deadline = Date().addingTimeInterval(10)
        while true {
            let client = try LineClient(path: harness.socket)
            try client.send(["type": "subscribe", "id": "s", "bundleIdentifier": bundle])
            let reply = try #require(client.readMessage(), "no reply to subscribe")
            if reply["code"] as? String == "already-subscribed" && Date() < deadline {
                client.close()
                usleep(20_000)
                continue
            }
            return (client, reply)
        }
    }

    /// Whatever the socket holds now, without waiting.
    func readAvailable(_ client: LineClient) -> [[String: Any]] {
        var messages: [[String: Any]] = []
        var quick = timeval(tv_sec: 0, tv_usec: 300_000)
        setsockopt(client.fd, SOL_SOCKET, SO_RCVTIMEO, &quick, socklen_t(MemoryLayout<timeval>.size))
        while let message = client.readMessage() { messages.append(message) }
        return messages
    }

    static func residentKiB(_ pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    @Test func aLineCutByADisconnectIsDroppedAndTheNextClientServed() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        for _ in 0..<20 {
            let cut = try LineClient(path: harness.socket)
            try cut.sendRaw(Array(#"{"type":"subscribe","id":"1","bundleIdentifier":"com.sunsetlakes"#.utf8))
            cut.close()
        }
        // A line that arrives in two pieces is still one line.
        let slow = try LineClient(path: harness.socket)
        defer { slow.close() }
        try slow.sendRaw(Array(#"{"type":"hello","#.utf8))
        usleep(200_000)
        try slow.sendRaw(Array(#""protocol":1}"#.utf8) + [0x0A])
        #expect(slow.readMessage()?["type"] as? String == "welcome")
        // The cut subscribe never took effect: the handler is free.
        let (client, subscribed) = try subscribe(harness)
        defer { client.close() }
        #expect(subscribed["type"] as? String == "subscribed", "\(subscribed)")
        try harness.drop("after-cut.pdb", Self.pdb)
        #expect(client.readMessage()?["type"] as? String == "launch")
        let event = try #require(client.readMessage())
        #expect((event["url"] as? String)?.hasSuffix("/after-cut.pdb") == true, "\(event)")
        #expect(harness.process?.isRunning == true)
    }

    @Test func aSubscriberThatNeverReadsFillsOnlyItsOwnWindow() throws {
        let harness = try DaemonHarness(extraConfig: "max_unacknowledged = 8")
        defer { harness.remove() }
        try harness.start()
        let pid = try #require(harness.process?.processIdentifier)
        let (stuck, _) = try subscribe(harness, Self.molecules)
        defer { stuck.close() }
        let (reader, _) = try subscribe(harness, Self.viewer)
        defer { reader.close() }
        #expect(reader.readMessage()?["type"] as? String == "launch")
        let before = Self.residentKiB(pid)
        for index in 0..<300 { try harness.drop("stuck\(index).pdb", Array("HEADER \(index)\n".utf8) + Self.pdb) }
        for index in 0..<100 { try harness.drop("read\(index).txt", Array("text \(index)\n".utf8)) }
        var received: Set<String> = []
        let deadline = Date().addingTimeInterval(60)
        while received.count < 100 && Date() < deadline {
            guard let event = reader.readMessage(), let id = event["deliveryID"] as? String else { break }
            #expect(event["type"] as? String == "openURL")
            received.insert(event["url"] as? String ?? "")
            try reader.send(["type": "ack", "deliveryID": id, "handled": true])
        }
        #expect(received.count == 100, "the reading handler gets all its documents while the other never reads: \(received.count)\n\(harness.daemonLog.suffix(1500))")
        #expect(harness.waitForInboxDrained(timeout: 60))
        // The stuck subscriber was sent its plain launch and then exactly one window of documents
        // (on a loaded machine the last of the window may come a little after the inbox drained:
        // wait for up to eight, then make sure no ninth follows).
        var stuckMessages: [[String: Any]] = []
        let windowDeadline = Date().addingTimeInterval(15)
        while stuckMessages.filter({ $0["deliveryID"] != nil }).count < 8 && Date() < windowDeadline {
            guard let message = stuck.readMessage() else { break }
            stuckMessages.append(message)
        }
        stuckMessages += readAvailable(stuck)
        let documents = stuckMessages.filter { $0["deliveryID"] != nil }
        #expect(documents.count == 8, "window of 8, got \(documents.count): \(stuckMessages.prefix(3))")
        let status = try LineClient(path: harness.socket)
        defer { status.close() }
        try status.send(["type": "status", "id": "st"])
        let reply = try #require(status.readMessage())
        let handlers = try #require(reply["handlers"] as? [[String: Any]])
        let molecules = try #require(handlers.first { $0["bundleIdentifier"] as? String == Self.molecules })
        #expect(molecules["pending"] as? Int == 300, "the backlog waits in the ledger: \(molecules)")
        #expect(handlers.first { $0["bundleIdentifier"] as? String == Self.viewer }?["pending"] as? Int == 0)
        let after = Self.residentKiB(pid)
        #expect(after - before < 32 * 1024, "the daemon's memory does not hold the backlog: \(before) KiB -> \(after) KiB")
    }

    /// A client that pipelines requests and never reads the replies: the daemon stops reading from
    /// it instead of queueing its requests and replies in memory, and serves everyone else.
    @Test func aClientThatNeverReadsItsRepliesIsPausedNotBuffered() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        let pid = try #require(harness.process?.processIdentifier)
        let flood = try LineClient(path: harness.socket)
        defer { flood.close() }
        _ = fcntl(flood.fd, F_SETFL, fcntl(flood.fd, F_GETFL) | O_NONBLOCK)
        let before = Self.residentKiB(pid)
        let line = Array(#"{"type":"status","id":"flood"}"#.utf8) + [0x0A]
        let chunk = Array([[UInt8]](repeating: line, count: 2048).joined())
        var sent = 0
        var lastProgress = Date()
        let started = Date()
        // Send until the daemon stops taking bytes for a second, or 8 s, or 200 MB.
        while Date().timeIntervalSince(started) < 8 && Date().timeIntervalSince(lastProgress) < 1 && sent < 200 << 20 {
            let written = chunk.withUnsafeBytes { Glibc.send(flood.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written > 0 {
                sent += written
                lastProgress = Date()
            } else {
                usleep(10_000)
            }
        }
        // The others are served meanwhile.
        let other = try LineClient(path: harness.socket)
        defer { other.close() }
        try other.send(["type": "hello", "protocol": 1])
        #expect(other.readMessage()?["type"] as? String == "welcome")
        usleep(500_000)
        let after = Self.residentKiB(pid)
        #expect(Date().timeIntervalSince(lastProgress) >= 1, "the daemon stopped reading from the flooding client (it took \(sent >> 20) MiB)")
        #expect(after - before < 16 * 1024, "replies nobody reads are not queued in memory: \(before) KiB -> \(after) KiB after \(sent >> 10) KiB of requests")
        // Reading again resumes it: the replies come, in order, each a status.
        _ = fcntl(flood.fd, F_SETFL, fcntl(flood.fd, F_GETFL) & ~O_NONBLOCK)
        for _ in 0..<100 { #expect(flood.readMessage()?["type"] as? String == "status") }
    }

    @Test func flakySubscribersStillEndWithEveryDocumentAcknowledgedOnce() throws {
        let harness = try DaemonHarness(extraConfig: "max_unacknowledged = 16")
        defer { harness.remove() }
        try harness.start()
        let count = 100
        for index in 0..<count { try harness.drop(String(format: "flaky%03d.pdb", index), Array("HEADER \(index)\n".utf8) + Self.pdb) }
        #expect(harness.waitForInboxDrained(timeout: 60))
        var acknowledged: Set<String> = []
        var seen: Set<String> = []
        var resentAfterAck: [String] = []
        func note(_ event: [String: Any]) -> String? {
            guard let id = event["deliveryID"] as? String else { return nil }
            if acknowledged.contains(id) { resentAfterAck.append(id) }
            seen.insert(id)
            return id
        }

        // One that hangs up in the middle of every tenth event: half an ack line, then gone.
        var received = 0
        while received < 60 {
            let (client, reply) = try subscribe(harness)
            #expect(reply["type"] as? String == "subscribed", "\(reply)")
            while let event = client.readMessage() {
                guard let id = note(event) else { continue }
                received += 1
                if received % 10 == 0 {
                    try client.sendRaw(Array(#"{"type":"ack","deliveryID":""#.utf8) + Array(id.utf8).prefix(5))
                    break
                }
                try client.send(["type": "ack", "deliveryID": id, "handled": true])
                acknowledged.insert(id)
            }
            client.close()
        }

        // One that acknowledges its launch and hangs up at once, ten times: the acknowledgement
        // must count even though the connection is gone before any reply could come.
        for _ in 0..<10 {
            let (client, _) = try subscribe(harness)
            if let event = client.readMessage(), let id = note(event) {
                try client.send(["type": "ack", "deliveryID": id, "handled": true])
                acknowledged.insert(id)
            }
            client.close()
        }

        // One that never acknowledges.
        let (silent, _) = try subscribe(harness)
        for _ in 0..<10 { if let event = silent.readMessage() { _ = note(event) } }
        silent.close()

        // One that connects and disconnects in a tight loop, some after asking to subscribe.
        for round in 0..<300 {
            let client = try LineClient(path: harness.socket)
            if round % 2 == 0 { try? client.send(["type": "subscribe", "id": "t", "bundleIdentifier": Self.molecules]) }
            client.close()
        }

        // A well-behaved subscriber takes the rest.
        let (client, reply) = try subscribe(harness)
        #expect(reply["type"] as? String == "subscribed", "\(reply)")
        #expect(reply["pending"] as? Int == count - acknowledged.count, "\(reply), acknowledged \(acknowledged.count)")
        while acknowledged.count < count, let event = client.readMessage() {
            guard let id = note(event) else { continue }
            #expect(!acknowledged.contains(id), "an acknowledged delivery is never sent again: \(id)")
            try client.send(["type": "ack", "deliveryID": id, "handled": true])
            acknowledged.insert(id)
        }
        client.close()
        #expect(resentAfterAck.isEmpty, "acknowledged, then sent again: \(resentAfterAck.prefix(5))")
        #expect(acknowledged.count == count, "acknowledged \(acknowledged.count) of \(count)\n\(harness.daemonLog.suffix(1500))")
        #expect(seen.count == count, "one delivery id per document: \(seen.count)")
        let (last, final) = try subscribe(harness)
        defer { last.close() }
        #expect(final["pending"] as? Int == 0, "nothing owed after everything was acknowledged: \(final)")
        #expect(last.readLineText() == #"{"type":"launch","launchOptions":{}}"#)
        #expect(harness.process?.isRunning == true)
    }

    @Test func aThousandIdleConnectionsDoNotStopDeliveries() throws {
        let harness = try DaemonHarness(extraConfig: "max_connections = 1100")
        defer { harness.remove() }
        try harness.start()
        var idle: [LineClient] = []
        defer { idle.forEach { $0.close() } }
        for _ in 0..<1000 { idle.append(try LineClient(path: harness.socket)) }
        let (client, reply) = try subscribe(harness)
        defer { client.close() }
        #expect(reply["type"] as? String == "subscribed", "\(reply)")
        #expect(client.readMessage()?["type"] as? String == "launch")
        try harness.drop("busy.pdb", Self.pdb)
        let event = try #require(client.readMessage(), "\(harness.daemonLog.suffix(1500))")
        #expect((event["url"] as? String)?.hasSuffix("/busy.pdb") == true)
        // And the idle ones are still connected and answer.
        try idle[500].send(["type": "hello", "protocol": 1])
        #expect(idle[500].readMessage()?["type"] as? String == "welcome")
    }
}
