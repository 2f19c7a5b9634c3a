import DocRouteTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What one local user can make docrouted spend of the disk the containers and the ledger share:
/// a sparse file passed to `open` again and again, URLs of a megabyte each, and requests past
/// every budget. Each is refused with a reason, or costs what it should; inbox files past a
/// handler's limit wait in their inbox, never lost.
@Suite(.serialized) struct DiskAndLedgerBudgetIntegrationTests {
    static let molecules = "com.sunsetlakesoftware.molecules"
    static let todolist = "com.acme.todolist"
    static let pdb = DeliveryIntegrationTests.pdb
    static let isRoot = getuid() == 0

    /// MiB of the sparse file (`make chaos`: 1024, the probe's size) and how often it is opened.
    static var sparseMiB: Int64 { Int64(ProcessInfo.processInfo.environment["DOCROUTE_SPARSE_MIB"] ?? "") ?? 256 }
    static var sparseOpens: Int { Int(ProcessInfo.processInfo.environment["DOCROUTE_SPARSE_OPENS"] ?? "") ?? 3 }
    /// URLs of a megabyte sent, and URLs of 8,000 bytes (`make chaos`: the probe's 200, and 5,000).
    static var hugeURLs: Int { Int(ProcessInfo.processInfo.environment["DOCROUTE_URL_FLOOD_HUGE"] ?? "") ?? 20 }
    static var longURLs: Int { Int(ProcessInfo.processInfo.environment["DOCROUTE_URL_FLOOD_LONG"] ?? "") ?? 120 }

    /// A world-readable folder under the harness's root for files nobody opens.
    static func publicFolder(_ harness: DaemonHarness) throws -> String {
        let folder = harness.root + "/public"
        #expect(mkdir(folder, 0o755) == 0 && chmod(folder, 0o755) == 0)
        return folder
    }

    /// A sparse `.pdb` of `size` bytes: a molecule at the start, two more pieces, holes between.
    static func sparsePDB(_ path: String, size: Int64) throws {
        try SparseFile.create(path, size: size, pieces: [
            (0, pdb), (size / 2 + 123, Array(repeating: 0x42, count: 4096)), (size - 4096, Array(repeating: 0x43, count: 4096)),
        ])
        chmod(path, 0o644)
    }

    /// Bytes of the ledger's files on disk, as `du` counts them.
    static func ledgerBytes(_ harness: DaemonHarness) -> Int64 {
        ["", "-wal", "-shm"].compactMap { SparseFile.allocatedBytes(harness.root + "/state/ledger.sqlite" + $0) }.reduce(0, +)
    }

    /// The probe's attack: a 1 GiB sparse file of 8 blocks passed three times with `docroutectl
    /// open` as nobody became three fully allocated copies. Each copy now takes about what its
    /// source takes, and reads back the same bytes.
    @Test(.enabled(if: isRoot, "the client runs as nobody, which needs root to setuid"))
    func aSparseFileOpenedAgainAndAgainAsNobodyStaysSparseInTheSandbox() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        PeerFlood.openRoot(harness)
        let size = Self.sparseMiB << 20
        let source = try Self.publicFolder(harness) + "/disk.pdb"
        try Self.sparsePDB(source, size: size)
        let sourceAllocated = try #require(SparseFile.allocatedBytes(source))
        try #require(sourceAllocated < 1 << 20, "the test's file system keeps holes (\(sourceAllocated) bytes allocated)")

        for attempt in 0..<Self.sparseOpens {
            let open = try CtlProcess.run(["open", "--socket", harness.socket, source], asNobody: true)
            #expect(open.status == 0, "open \(attempt): \(open.error)\n\(harness.daemonLog.suffix(1500))")
        }

        let sandbox = harness.sandbox(Self.molecules, mailbox: "Shared")
        let copies = ((try? FileManager.default.contentsOfDirectory(atPath: sandbox)) ?? []).sorted()
        #expect(copies.count == Self.sparseOpens, "\(copies)")
        var allocated: Int64 = 0
        for copy in copies {
            let path = sandbox + "/" + copy
            let taken = SparseFile.allocatedBytes(path) ?? .max
            allocated += taken
            #expect(taken <= sourceAllocated + 64 * 1024, "\(copy) takes \(taken) bytes of disk, its source \(sourceAllocated)")
            #expect(SparseFile.sameBytes(path, source), "\(copy) reads back the source's bytes")
        }
        #expect(allocated < 4 << 20, "\(Self.sparseOpens) copies of a \(Self.sparseMiB) MiB sparse file took \(allocated) bytes")
    }

    /// `max_file_allocation` bounds the disk one copy takes: a dense file over it is refused
    /// (`bad-request` naming the key, and quarantined from an inbox), a far larger sparse one is
    /// taken, since its copy keeps its holes.
    @Test(.enabled(if: isRoot, "the client runs as nobody, which needs root to setuid"))
    func aFileWhoseCopyWouldTakeMoreDiskThanMaxFileAllocationIsRefused() throws {
        let harness = try DaemonHarness(extraConfig: "max_file_size = 1073741824\nmax_file_allocation = 1048576")
        defer { harness.remove() }
        try harness.start()
        PeerFlood.openRoot(harness)
        let folder = try Self.publicFolder(harness)
        var dense = Self.pdb
        dense += Array(repeating: 0x20, count: (2 << 20) - dense.count)
        try Data(dense).write(to: URL(fileURLWithPath: folder + "/dense.pdb"))
        chmod(folder + "/dense.pdb", 0o644)
        try Self.sparsePDB(folder + "/sparse.pdb", size: 256 << 20)

        let refused = try CtlProcess.run(["open", "--socket", harness.socket, folder + "/dense.pdb"], asNobody: true)
        #expect(refused.status == 1)
        #expect(refused.error.contains("bad-request") && refused.error.contains("max_file_allocation"), "\(refused.error)")
        let taken = try CtlProcess.run(["open", "--socket", harness.socket, folder + "/sparse.pdb"], asNobody: true)
        #expect(taken.status == 0, "\(taken.error)")
        let sandbox = harness.sandbox(Self.molecules, mailbox: "Shared")
        #expect(!FileManager.default.fileExists(atPath: sandbox + "/dense.pdb"))
        #expect(FileManager.default.fileExists(atPath: sandbox + "/sparse.pdb"))

        try harness.drop("big.pdb", dense)
        let reason = harness.quarantine + "/Inbox/big.pdb.reason"
        #expect(harness.waitFor(reason), "\(harness.daemonLog.suffix(1500))")
        let text = (try? String(contentsOfFile: reason, encoding: .utf8)) ?? ""
        #expect(text.contains("max_file_allocation"), "\(text)")
    }

    /// `open_requests_per_minute`: past it a user's requests are answered `over-limit` with the
    /// seconds to wait, `docroutectl open` says so with what to do, and root is not held back.
    @Test(.enabled(if: isRoot, "the client runs as nobody, which needs root to setuid"))
    func aUserPastItsRequestsPerMinuteIsToldOverLimitAndWhenToTryAgain() throws {
        let harness = try DaemonHarness(extraConfig: "open_requests_per_minute = 5")
        defer { harness.remove() }
        try harness.start()
        PeerFlood.openRoot(harness)
        let flood = try PeerFlood.run(socket: harness.socket, connections: 8, seconds: 0,
                                      line: #"{"type":"open","id":"1","url":"todolist://www.acme.com?flood"}"#)
        #expect(flood.replies == ["opened": 5, "over-limit": 3], "\(flood.output)")

        let ctl = try CtlProcess.run(["open", "--socket", harness.socket, "todolist://www.acme.com?again"], asNobody: true)
        #expect(ctl.status == 1)
        #expect(ctl.error.contains("over-limit") && ctl.error.contains("open_requests_per_minute") && ctl.error.contains("try again in"), "\(ctl.error)")
        #expect(ctl.error.contains("docroute.toml(5)"), "docroutectl adds what to do: \(ctl.error)")

        let client = try LineClient(path: harness.socket)
        defer { client.close() }
        for index in 0..<8 {
            try client.send(["type": "open", "id": "\(index)", "url": "todolist://www.acme.com?root\(index)"])
            #expect(client.readMessage()?["type"] as? String == "opened", "root is not held to the per-user budget")
        }
        #expect(harness.daemonLog.contains("open refused"), "the refusal is logged")
    }

    /// The probe's attack on the ledger: 200 URLs of about 1 MB each recorded as nobody took it
    /// from 3.8 to 205.5 MiB. Now a URL over `max_url_length` is `bad-request`, and past
    /// `max_pending_per_uid` unacknowledged deliveries the rest are `over-limit`, also after a
    /// restart; the ledger grows by the few kept, and `status` says how large it is.
    @Test(.enabled(if: isRoot, "the flood runs as nobody, which needs root to setuid"))
    func aURLFloodAsNobodyLeavesTheLedgerBounded() throws {
        let harness = try DaemonHarness(extraConfig: "open_requests_per_minute = 1000000\nmax_pending_per_uid = 50")
        defer { harness.remove() }
        try harness.start()
        PeerFlood.openRoot(harness)
        let before = Self.ledgerBytes(harness)

        let huge = try URLFlood.run(socket: harness.socket, count: Self.hugeURLs, urlBytes: 1_000_000)
        #expect(huge.replies == ["bad-request": Self.hugeURLs], "\(huge.output)")
        #expect(huge.messages.first?.contains("max_url_length") == true, "\(huge.messages.first ?? "")")

        let long = try URLFlood.run(socket: harness.socket, count: Self.longURLs, urlBytes: 8_000)
        #expect(long.replies == ["opened": 50, "over-limit": Self.longURLs - 50], "\(long.output)")
        #expect(long.messages.contains { $0.contains("max_pending_per_uid") }, "\(long.messages.prefix(3))")
        #expect(harness.process?.isRunning == true)
        let grown = Self.ledgerBytes(harness) - before
        #expect(grown < 4 << 20, "the ledger grew by \(grown) bytes")

        // The count is the ledger's: a restart does not give the user a new allowance.
        harness.stop()
        try harness.start()
        let again = try URLFlood.run(socket: harness.socket, count: 1, urlBytes: 100)
        #expect(again.replies == ["over-limit": 1], "\(again.output)")

        let client = try LineClient(path: harness.socket)
        defer { client.close() }
        try client.send(["type": "status", "id": "s"])
        let status = try #require(client.readMessage())
        let reported = try #require(status["ledgerBytes"] as? Int, "status carries ledgerBytes: \(status.keys.sorted())")
        #expect(reported > 0 && Int64(reported) <= Self.ledgerBytes(harness) + (1 << 20))
        let text = try CtlProcess.run(["status", "--socket", harness.socket])
        #expect(text.output.contains("ledger: ") && text.output.contains("on disk"), "\(text.output)")
    }

    /// `max_pending_per_handler`: files dropped for a handler that never takes its documents stop
    /// at the limit and wait in their inbox (neither quarantined nor lost), an `open` for it is
    /// `over-limit`; once the handler acknowledges, the waiting files arrive.
    @Test(.enabled(if: isRoot, "the open runs as nobody, which needs root to setuid"))
    func inboxFilesPastAHandlersLimitWaitInTheirInboxUntilItTakesSome() throws {
        let harness = try DaemonHarness(extraConfig: "max_pending_per_handler = 3")
        defer { harness.remove() }
        try harness.start()
        PeerFlood.openRoot(harness)
        for index in 1...5 { try harness.drop("\(index)abc.pdb", Self.pdb) }
        let sandbox = harness.sandbox(Self.molecules)
        func delivered() -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: sandbox)) ?? []).sorted() }
        func waiting() -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: harness.inbox)) ?? []).sorted() }
        #expect(harness.waitUntil(timeout: 15) { delivered().count == 3 && waiting().count == 2 }, "\(delivered()) \(waiting())")
        usleep(2_500_000)
        #expect(delivered().count == 3 && waiting().count == 2, "still waiting, not delivered past the limit: \(delivered()) \(waiting())")
        let quarantined = ((try? FileManager.default.subpathsOfDirectory(atPath: harness.quarantine)) ?? []).filter { $0.hasSuffix(".pdb") }
        #expect(quarantined.isEmpty, "nothing is quarantined for it: \(quarantined)")
        #expect(harness.daemonLog.contains("wait in their inbox"), "\(harness.daemonLog.suffix(1500))")

        let shared = try Self.publicFolder(harness)
        try Data(Self.pdb).write(to: URL(fileURLWithPath: shared + "/more.pdb"))
        chmod(shared + "/more.pdb", 0o644)
        let open = try CtlProcess.run(["open", "--socket", harness.socket, shared + "/more.pdb"], asNobody: true)
        #expect(open.status == 1 && open.error.contains("over-limit") && open.error.contains("max_pending_per_handler"), "\(open.error)")

        // The handler comes and takes what it is owed; the files left waiting follow.
        let handler = try LineClient(path: harness.socket)
        defer { handler.close() }
        try handler.send(["type": "subscribe", "id": "1", "bundleIdentifier": Self.molecules])
        #expect(handler.readMessage()?["type"] as? String == "subscribed")
        var acknowledged = 0
        let deadline = Date().addingTimeInterval(90)
        while acknowledged < 5, Date() < deadline {
            guard let event = handler.readMessage(), let id = event["deliveryID"] as? String else { continue }
            try handler.send(["type": "ack", "deliveryID": id, "handled": true])
            acknowledged += 1
        }
        #expect(acknowledged == 5, "\(harness.daemonLog.suffix(2000))")
        // A source leaves its inbox just after its commit, which the event follows.
        #expect(harness.waitUntil { delivered().count == 5 && waiting().isEmpty }, "\(delivered()) \(waiting())")
    }
}

/// URLs of a given length sent with `open` as another user, one connection, one after the other
/// (a Python child drops to the uid first): the probe's ledger flood.
enum URLFlood {
    struct Result {
        var replies: [String: Int]
        var messages: [String]
        var output: String
    }

    static func run(socket: String, uid: UInt32 = 65534, count: Int, urlBytes: Int) throws -> Result {
        let script = """
            import json, os, socket, sys
            path, count, length, uid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
            os.setgroups([]); os.setgid(uid); os.setuid(uid)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(60)
            s.connect(path)
            reader = s.makefile("rb")
            replies, messages = {}, []
            for index in range(count):
                prefix = "todolist://www.acme.com?%d&" % index
                url = prefix + "x" * (length - len(prefix))
                s.sendall(json.dumps({"type": "open", "id": str(index), "url": url}).encode() + b"\\n")
                message = json.loads(reader.readline())
                key = message.get("code") or message.get("type")
                replies[key] = replies.get(key, 0) + 1
                if "message" in message and len(messages) < 5: messages.append(message["message"])
            print(json.dumps({"replies": replies, "messages": messages}))
            """
        let (object, text) = try PythonScript(script, [socket, "\(count)", "\(urlBytes)", "\(uid)"]).finish("the URL flood")
        return Result(replies: object["replies"] as? [String: Int] ?? [:], messages: object["messages"] as? [String] ?? [], output: String(text.suffix(2000)))
    }
}
