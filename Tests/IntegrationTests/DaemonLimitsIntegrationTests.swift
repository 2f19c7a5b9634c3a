import DocRouteTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What any local user can throw at the socket: floods of requests and connections,
/// half lines, odd subscriptions. The daemon stays up and keeps serving real handlers.
@Suite(.serialized) struct DaemonLimitsIntegrationTests {
    static let molecules = "com.sunsetlakesoftware.molecules"
    static let pdb = DeliveryIntegrationTests.pdb
    static let isRoot = getuid() == 0

    /// Seconds a flood lasts: short in `make test`, long in `make chaos`.
    static var floodSeconds: Double {
        Double(ProcessInfo.processInfo.environment["DOCROUTE_FLOOD_SECONDS"] ?? "") ?? 3
    }

    /// `status` from many connections at once as a user who is not an
    /// administrator. Every request gets `not-permitted`, the daemon never crashes, and root's
    /// `status` still works afterwards.
    @Test(.enabled(if: isRoot, "the flood runs as nobody, which needs root to setuid"))
    func aStatusFloodAsNobodyIsRefusedAndTheDaemonSurvives() throws {
        // All 64 from one uid: the per-uid cap is raised so that every one of them asks.
        let harness = try DaemonHarness(extraConfig: "admin_group = \"adm\"\nmax_connections_per_uid = 64")
        defer { harness.remove() }
        try harness.start()
        PeerFlood.openRoot(harness)
        let result = try PeerFlood.run(socket: harness.socket, connections: 64, seconds: Self.floodSeconds)
        #expect(harness.process?.isRunning == true, "docrouted died under the flood:\n\(harness.daemonLog.suffix(3000))")
        #expect(result.closedEarly == 0, "\(result.output)")
        #expect(Set(result.replies.keys) == ["not-permitted"], "\(result.replies)")
        #expect((result.replies["not-permitted"] ?? 0) >= 64, "\(result.replies)")

        let client = try LineClient(path: harness.socket)
        defer { client.close() }
        try client.send(["type": "status", "id": "root"])
        #expect(client.readMessage()?["type"] as? String == "status", "root is still an administrator")
    }

    /// Thousands of idle connections from ordinary users take neither a real
    /// handler's subscribe nor its deliveries. One uid gets `max_connections_per_uid`, the rest
    /// are refused with `too-many-connections`; many uids together cannot take the connections
    /// kept for handlers.
    @Test(.enabled(if: isRoot, "the flood runs as other uids, which needs root to setuid"))
    func aConnectionFloodLeavesRoomForARealHandler() throws {
        let harness = try DaemonHarness(extraConfig: "max_connections = 64\nmax_connections_per_uid = 8\nreserved_handler_connections = 8")
        defer { harness.remove() }
        try harness.start()
        PeerFlood.openRoot(harness)
        let perUID = Int(ProcessInfo.processInfo.environment["DOCROUTE_FLOOD_CONNECTIONS_PER_UID"] ?? "") ?? 100
        // Ten uids, each asking for far more than its share: 80 would fit the cap per uid, but
        // only 56 are open to clients that are not handlers.
        let uids: [UInt32] = (0..<10).map { 60_000 + UInt32($0) }
        let flood = try PeerFlood.hold(socket: harness.socket, uids: uids, perUID: perUID, seconds: 8)
        defer { flood.wait() }
        #expect(flood.admitted == 56, "64 minus the 8 kept for handlers: \(flood.report)")
        #expect(Set(flood.refused.keys) == ["too-many-connections"], "\(flood.report)")
        #expect(flood.refused["too-many-connections"] == 10 * perUID - 56, "\(flood.report)")

        let client = try LineClient(path: harness.socket)
        defer { client.close() }
        try client.send(["type": "subscribe", "id": "1", "bundleIdentifier": Self.molecules])
        let reply = try #require(client.readMessage())
        #expect(reply["type"] as? String == "subscribed", "a handler still subscribes beside the flood: \(reply)")
        #expect(client.readMessage()?["type"] as? String == "launch")
        try harness.drop("beside.pdb", Self.pdb)
        let event = try #require(client.readMessage(), "\(harness.daemonLog.suffix(1500))")
        #expect((event["url"] as? String)?.hasSuffix("/beside.pdb") == true)
        #expect(harness.process?.isRunning == true)
    }

    /// One uid alone gets `max_connections_per_uid` connections.
    @Test(.enabled(if: isRoot, "the flood runs as nobody, which needs root to setuid"))
    func oneUserGetsItsShareOfConnectionsAndNoMore() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        PeerFlood.openRoot(harness)
        let flood = try PeerFlood.hold(socket: harness.socket, uids: [65534], perUID: 200, seconds: 0)
        flood.wait()
        #expect(flood.admitted == 32, "max_connections_per_uid defaults to 32: \(flood.report)")
        #expect(flood.refused["too-many-connections"] == 168, "\(flood.report)")
        #expect(harness.daemonLog.contains("too many connections from uid 65534"), "\(harness.daemonLog.suffix(1500))")
    }

    /// A connection that neither asks anything nor subscribes is closed after
    /// `idle_timeout`; a subscribed one stays however long it waits.
    @Test func idleConnectionsAreClosedUnlessSubscribed() throws {
        let harness = try DaemonHarness(extraConfig: "idle_timeout = 1")
        defer { harness.remove() }
        try harness.start()
        let idle = try LineClient(path: harness.socket, timeout: 10)
        defer { idle.close() }
        let asked = try LineClient(path: harness.socket, timeout: 10)
        defer { asked.close() }
        let (handler, reply) = try subscribe(harness)
        defer { handler.close() }
        #expect(reply["type"] as? String == "subscribed")
        #expect(handler.readMessage()?["type"] as? String == "launch")
        usleep(500_000)
        try asked.send(["type": "hello", "protocol": 1])
        #expect(asked.readMessage()?["type"] as? String == "welcome")
        let start = Date()
        #expect(idle.readLineText() == nil, "closed by the daemon")
        #expect(Date().timeIntervalSince(start) < 5, "closed after about a second, not the client's own 10 s timeout")
        // A request restarts the clock: `asked` is closed about a second after its hello.
        #expect(asked.readLineText() == nil)
        usleep(1_500_000)
        try harness.drop("waited.pdb", Self.pdb)
        let event = try #require(handler.readMessage(), "the subscribed handler is still connected: \(harness.daemonLog.suffix(1500))")
        #expect((event["url"] as? String)?.hasSuffix("/waited.pdb") == true)
    }

    /// Half lines from many connections are capped in total, and their memory
    /// is given back when the connections close.
    @Test func unfinishedLinesAreCappedAndTheirMemoryGivenBack() throws {
        let harness = try DaemonHarness(extraConfig: "max_unfinished_line_bytes = 8388608")
        defer { harness.remove() }
        try harness.start()
        let pid = try #require(harness.process?.processIdentifier)
        let before = try #require(Self.residentBytes(pid))
        let connections = Int(ProcessInfo.processInfo.environment["DOCROUTE_HALF_LINE_CONNECTIONS"] ?? "") ?? 60
        let half = Array(#"{"type":"status","id":""#.utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: 900 * 1024)
        var clients: [LineClient] = []
        for _ in 0..<connections {
            let client = try LineClient(path: harness.socket, timeout: 1)
            // A connection over the limit is closed while it still sends.
            try? client.sendRaw(half)
            clients.append(client)
        }
        usleep(500_000)
        let peak = try #require(Self.residentBytes(pid))
        var refused = 0
        for client in clients {
            if let line = client.readLineText(), line.contains("max_unfinished_line_bytes") { refused += 1 }
        }
        // 8 MiB hold at most 9 such half lines; every other connection was told and closed.
        #expect(refused >= connections - 9, "\(refused) of \(connections) refused")
        #expect(peak - before < 64 << 20, "resident grew by \((peak - before) >> 20) MiB while \(connections) half lines came in")
        clients.forEach { $0.close() }
        let settled = harness.waitUntil(timeout: 10) { (Self.residentBytes(pid) ?? .max) - before < 24 << 20 }
        #expect(settled, "resident \(((Self.residentBytes(pid) ?? 0) - before) >> 20) MiB above the start after the connections closed")
        let client = try LineClient(path: harness.socket)
        defer { client.close() }
        try client.send(["type": "hello", "protocol": 1])
        #expect(client.readMessage()?["type"] as? String == "welcome")
    }

    /// A second `subscribe` on a connection is refused, and the first
    /// subscription's acknowledgements still count.
    @Test func aConnectionServesOneHandler() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        try harness.drop("one.pdb", Self.pdb)
        #expect(harness.waitForInboxDrained())
        let (client, reply) = try subscribe(harness)
        defer { client.close() }
        #expect(reply["pending"] as? Int == 1)
        let launch = try #require(client.readMessage())
        let deliveryID = try #require(launch["deliveryID"] as? String)
        try client.send(["type": "subscribe", "id": "2", "bundleIdentifier": "org.docroute.textviewer"])
        let second = try #require(client.readMessage())
        #expect(second["code"] as? String == "already-subscribed", "\(second)")
        #expect((second["message"] as? String)?.contains(Self.molecules) == true, "\(second)")
        try client.send(["type": "ack", "deliveryID": deliveryID, "handled": true])
        try client.send(["type": "hello", "protocol": 1])
        #expect(client.readMessage()?["type"] as? String == "welcome", "the ack was taken without an error")
        // The other handler is free for another connection.
        let (other, otherReply) = try subscribe(harness, "org.docroute.textviewer")
        defer { other.close() }
        #expect(otherReply["type"] as? String == "subscribed", "\(otherReply)")
        client.close()
        let (again, againReply) = try subscribe(harness)
        defer { again.close() }
        #expect(againReply["pending"] as? Int == 0, "the first handler's ack counted: \(againReply)")
    }

    func subscribe(_ harness: DaemonHarness, _ bundle: String = molecules) throws -> (LineClient, [String: Any]) {
        let client = try LineClient(path: harness.socket)
        try client.send(["type": "subscribe", "id": "1", "bundleIdentifier": bundle])
        let reply = try #require(client.readMessage())
        return (client, reply)
    }

    /// VmRSS of a process, in bytes.
    static func residentBytes(_ pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = Int(line.split(whereSeparator: { $0 == " " || $0 == "\t" })[1]) else { return nil }
        return kilobytes * 1024
    }
}
