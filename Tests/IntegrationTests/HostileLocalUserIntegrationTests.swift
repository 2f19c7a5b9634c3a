import DocRouteTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What a local user with no rights at all can throw at the daemon's descriptor table: a hoard of
/// passed descriptors, a flood of folders in an inbox, the descriptor socket's connections held
/// or trickled into. The daemon runs with a descriptor limit of 1,024 (soft and hard), which any
/// of these would have exhausted in a second or two; it must stay up, keep its descriptors far
/// below the limit, and go on delivering to a real handler.
@Suite(.serialized) struct HostileLocalUserIntegrationTests {
    static let molecules = DeliveryIntegrationTests.molecules
    static let pdb = DeliveryIntegrationTests.pdb
    static let isRoot = getuid() == 0
    static let nobody: UInt32 = 65534
    /// Runs docrouted with at most 1,024 descriptors.
    static let smallDescriptorTable = ["/usr/bin/prlimit", "--nofile=1024:1024", "--"]

    /// Seconds an attack lasts: short in `make test`, long in `make chaos`.
    static var attackSeconds: Double {
        Double(ProcessInfo.processInfo.environment["DOCROUTE_HOSTILE_SECONDS"] ?? "") ?? 3
    }

    static func descriptorSocket(_ harness: DaemonHarness) -> String {
        String(harness.socket.dropLast(".sock".count)) + ".fd.sock"
    }

    /// A handler subscribes while the attack goes on, and gets a document dropped then.
    static func handlerIsServed(_ harness: DaemonHarness, name: String) throws {
        let handler = try LineClient(path: harness.socket)
        defer { handler.close() }
        handler.setTimeout(15)
        try handler.send(["type": "subscribe", "id": "s", "bundleIdentifier": molecules])
        let subscribed = try #require(handler.readMessage(), "no reply to subscribe under attack:\n\(harness.daemonLog.suffix(2000))")
        #expect(subscribed["type"] as? String == "subscribed", "\(subscribed)")
        let launch = try #require(handler.readMessage())
        #expect(launch["type"] as? String == "launch", "\(launch)")
        _ = try harness.drop(name, pdb)
        let event = try #require(handler.readMessage(), "no openURL under attack:\n\(harness.daemonLog.suffix(2000))")
        #expect(event["type"] as? String == "openURL", "\(event)")
        #expect((event["url"] as? String)?.hasSuffix("/" + name) == true, "\(event)")
        #expect(FileManager.default.contents(atPath: harness.sandbox(molecules) + "/" + name) == Data(pdb))
        if let id = event["deliveryID"] as? String { try handler.send(["type": "ack", "deliveryID": id, "handled": true]) }
    }

    /// One byte with eight descriptors per `sendmsg`, never a newline, on every connection the
    /// descriptor socket admits, with `candidates` requests queueing on the main socket beside
    /// it. Each hoarding connection is closed at its first `sendmsg` (a line may carry one
    /// descriptor, with its first byte), the rest are refused past the per-uid share, and the
    /// daemon's descriptors stay a small fraction of its limit.
    @Test(.enabled(if: isRoot, "the attack runs as nobody, which needs root to setuid"))
    func aDescriptorHoardNeitherCrashesTheDaemonNorStarvesAHandler() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start(shell: Self.smallDescriptorTable)
        PeerFlood.openRoot(harness)
        let pid = try #require(harness.process?.processIdentifier)
        let attack = try HostileClient.hoardDescriptors(descriptorSocket: Self.descriptorSocket(harness), mainSocket: harness.socket,
                                                        uid: Self.nobody, connections: 32, candidateConnections: 8,
                                                        seconds: Self.attackSeconds)
        usleep(300_000)
        var peak = HostileClient.openDescriptors(of: pid)
        try Self.handlerIsServed(harness, name: "during-hoard.pdb")
        while attack.process.isRunning {
            peak = max(peak, HostileClient.openDescriptors(of: pid))
            usleep(100_000)
        }
        let report = try attack.finish()
        #expect(harness.process?.isRunning == true, "docrouted died under the hoard:\n\(harness.daemonLog.suffix(3000))")
        #expect(report.count("sendmsg") > 0, "\(report.output)")
        #expect(report.count("answered") > 0, "candidates went unanswered: \(report.output)")
        #expect(peak < 256, "docrouted held \(peak) descriptors under the hoard")
        // Every hoarding connection was told why it ended: one descriptor per line, or its uid's share.
        let reasons = report.messages
        #expect(reasons.values.reduce(0, +) == 32, "\(report.output)")
        #expect((reasons["at most one descriptor may be passed with a line; the connection is closed"] ?? 0) >= 1, "\(reasons)")
        for reason in reasons.keys {
            #expect(reason.hasPrefix("at most one descriptor") || reason.hasPrefix("too many connections from uid \(Self.nobody)"), "\(reasons)")
        }
        try Self.handlerIsServed(harness, name: "after-hoard.pdb")
    }

    /// A descriptor sent with a byte inside a line (not its first) closes the connection with the
    /// reason, and the descriptor is not kept.
    @Test func aDescriptorInsideALineEndsTheConnection() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        let script = """
            path = sys.argv[1]
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            null = os.open("/dev/null", os.O_RDONLY)
            s.sendall(b'{"type":"open","id":"1",')
            time.sleep(0.2)
            s.sendmsg([b'"descriptor":true,"name":"x.pdb"}\\n'], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [null]))])
            print(json.dumps({"message": last_line(s)}))
            """
        let report = try HostileClient.start(script, [Self.descriptorSocket(harness)]).finish()
        #expect(report.object["message"] as? String == "a descriptor must be passed with the first byte of its line (one sendmsg per line); the connection is closed", "\(report.output)")
    }

    /// One uid holds as many descriptor-socket connections as it can: it gets its share and no
    /// more (`too-many-connections`), and another user's request on that socket is still served.
    @Test(.enabled(if: isRoot, "the connections are held as other uids, which needs root to setuid"))
    func oneUserCannotTakeTheDescriptorSocket() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        PeerFlood.openRoot(harness)
        let hold = try HostileClient.holdDescriptorSocket(Self.descriptorSocket(harness), uid: 60_001, connections: 64, seconds: 4)
        let held = try hold.firstReport()
        #expect(held.count("admitted") == 8, "an eighth of the socket's 64 connections: \(held.output)")
        #expect(held.messages["too-many-connections"] == 56, "\(held.output)")
        // Another user, meanwhile.
        let script = """
            path, uid = sys.argv[1], int(sys.argv[2])
            become(uid)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            s.sendall(b'{"type":"hello","protocol":1,"id":"h"}\\n')
            s.settimeout(5)
            print(s.makefile("rb").readline().decode().strip())
            """
        let other = try HostileClient.start(script, [Self.descriptorSocket(harness), "60002"]).finish()
        #expect(other.object["type"] as? String == "welcome", "\(other.output)")
        hold.process.waitUntilExit()
        #expect(harness.process?.isRunning == true)
    }

    /// A connection that sends one byte every second and never ends its line is closed once it
    /// has sent no complete line for the idle timeout, however many bytes trickled in.
    @Test(.enabled(if: isRoot, "the connection runs as nobody, which needs root to setuid"))
    func aTrickleWithoutALineIsClosedAtTheIdleTimeout() throws {
        let harness = try DaemonHarness(extraConfig: "idle_timeout = 3")
        defer { harness.remove() }
        try harness.start()
        PeerFlood.openRoot(harness)
        let report = try HostileClient.trickle(descriptorSocket: Self.descriptorSocket(harness), uid: Self.nobody, interval: 1, seconds: 12).finish()
        let closedAfter = report.object["closedAfter"] as? Double ?? -1
        #expect(closedAfter >= 2.5 && closedAfter < 8, "closed after \(closedAfter) s (idle timeout 3 s): \(report.output)")
    }

    /// Folders made in an inbox as fast as `mkdir` goes: past `max_mailboxes` they are not served,
    /// the daemon holds no descriptor for any mailbox, says so in the log and in `status`, and
    /// goes on delivering, in the inbox and in a mailbox it watches.
    @Test func aFolderFloodLeavesTheDaemonServing() throws {
        let folders = Int(ProcessInfo.processInfo.environment["DOCROUTE_FOLDER_FLOOD"] ?? "") ?? 3_000
        let harness = try DaemonHarness(extraConfig: "max_mailboxes = 1000")
        defer { harness.remove() }
        try harness.start(shell: Self.smallDescriptorTable)
        let pid = try #require(harness.process?.processIdentifier)
        // A mailbox in use before the flood: it stays served.
        _ = try harness.drop("early.pdb", Self.pdb, mailbox: "early")
        #expect(harness.waitFor(harness.sandbox(Self.molecules, mailbox: "early") + "/early.pdb", timeout: 30), "\(harness.daemonLog.suffix(2000))")
        var peak = 0
        for index in 0..<folders {
            mkdir(harness.inbox + "/box\(index)", 0o755)
            if index % 500 == 0 { peak = max(peak, HostileClient.openDescriptors(of: pid)) }
        }
        #expect(harness.waitUntil(timeout: 60) { harness.daemonLog.contains("message-id=mailbox-limit ") }, "\(harness.daemonLog.suffix(2000))")
        peak = max(peak, HostileClient.openDescriptors(of: pid))
        #expect(harness.process?.isRunning == true, "docrouted died under the folder flood:\n\(harness.daemonLog.suffix(3000))")
        #expect(peak < 256, "docrouted held \(peak) descriptors for \(folders) folders")
        // Still delivering: at the top of the inbox, and in the mailbox it watched before.
        _ = try harness.drop("top.pdb", Self.pdb)
        #expect(harness.waitFor(harness.sandbox(Self.molecules) + "/top.pdb", timeout: 30), "\(harness.daemonLog.suffix(2000))")
        _ = try harness.drop("boxed.pdb", Self.pdb, mailbox: "early")
        #expect(harness.waitFor(harness.sandbox(Self.molecules, mailbox: "early") + "/boxed.pdb", timeout: 30), "\(harness.daemonLog.suffix(2000))")
        // What an operator sees, once every folder was looked at.
        let client = try LineClient(path: harness.socket)
        defer { client.close() }
        var inbox: [String: Any] = [:]
        _ = harness.waitUntil(timeout: 30) {
            guard (try? client.send(["type": "status", "id": "s"])) != nil, let status = client.readMessage(),
                  let first = (status["inboxes"] as? [[String: Any]])?.first else { return false }
            inbox = first
            return first["foldersNotServed"] as? Int == folders + 1 - 1000
        }
        #expect(inbox["watchedFolders"] as? Int == 1000, "\(inbox)")
        #expect(inbox["maxMailboxes"] as? Int == 1000, "\(inbox)")
        #expect(inbox["foldersNotServed"] as? Int == folders + 1 - 1000, "\(inbox)")
        let text = try CtlProcess.run(["status", "--config", harness.configPath])
        let notServed = String(folders + 1 - 1000).reversed().enumerated()
            .map { $0.offset > 0 && $0.offset % 3 == 0 ? ",\($0.element)" : "\($0.element)" }.joined().reversed()
        #expect(text.output.contains("\(harness.inbox): 1,000 of 1,000 folders watched (max_mailboxes); \(String(notServed)) folders made past it are not served"),
                "\(text.output)")
        #expect(harness.daemonLog.components(separatedBy: "message-id=mailbox-limit ").count <= 3, "said once, not per folder")
    }
}
