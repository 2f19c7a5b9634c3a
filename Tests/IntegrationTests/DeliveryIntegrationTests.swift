import DocRouteTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The real daemon, real inotify, real SQLite: files dropped in an inbox reach sandboxes.
@Suite(.serialized) struct DeliveryIntegrationTests {
    static let pdb = Array("HEADER    PROTEIN\nATOM      1  N   ALA A   1      11.104   6.134  -6.504  1.00  0.00           N\nEND\n".utf8)
    static let molecules = "com.sunsetlakesoftware.molecules"

    @Test func droppedFilesArriveByteForByteWithTheNameRule() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        let source = try harness.drop("1abc.pdb", Self.pdb)
        let sandbox = harness.sandbox(Self.molecules)
        #expect(harness.waitFor(sandbox + "/1abc.pdb"), "\(harness.daemonLog)")
        #expect(FileManager.default.contents(atPath: sandbox + "/1abc.pdb") == Data(Self.pdb))
        #expect(harness.waitUntil { !FileManager.default.fileExists(atPath: source) }, "the source is removed once the copy is durable")

        try harness.drop("1abc.pdb", Self.pdb + [0x0A])
        #expect(harness.waitFor(sandbox + "/1abc-1.pdb"))
        #expect(FileManager.default.contents(atPath: sandbox + "/1abc-1.pdb")?.count == Self.pdb.count + 1)

        try harness.drop("1abc.pdb.gz", [0x1F, 0x8B, 0x08, 0x00] + Array(repeating: 0, count: 16))
        #expect(harness.waitFor(sandbox + "/1abc.pdb.gz"))
        try harness.drop("1abc.pdb.gz", [0x1F, 0x8B, 0x08, 0x00] + Array(repeating: 1, count: 16))
        #expect(harness.waitFor(sandbox + "/1abc-1.pdb.gz"), "the counter goes before the whole chain\n\(harness.daemonLog)")
    }

    /// A delivered source leaves the inbox at once and waits in the state directory's reclaim
    /// folder (same file system, 0700) until delivery is quiet; then it is freed, and `status`
    /// says how many wait.
    @Test func deliveredSourcesAreFreedOnceDeliveryIsQuiet() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        let reclaim = harness.root + "/state/reclaim"
        var folder = stat()
        #expect(stat(reclaim, &folder) == 0 && folder.st_mode & 0o777 == 0o700, "\(harness.daemonLog)")
        let names = (0..<40).map { String(format: "r%02d.pdb", $0) }
        for name in names { try harness.drop(name, Self.pdb + Array(name.utf8)) }
        let sandbox = harness.sandbox(Self.molecules)
        #expect(harness.waitUntil { names.allSatisfy { FileManager.default.fileExists(atPath: sandbox + "/" + $0) } }, "\(harness.daemonLog)")
        #expect(harness.waitForInboxDrained())
        #expect(harness.waitUntil { (try? FileManager.default.contentsOfDirectory(atPath: reclaim))?.isEmpty == true },
                "sources are freed once delivery is quiet: \((try? FileManager.default.contentsOfDirectory(atPath: reclaim)) ?? [])")
        let client = try LineClient(path: harness.socket)
        defer { client.close() }
        try client.send(["type": "status", "id": "s"])
        let status = try #require(client.readMessage())
        #expect(status["sourcesToReclaim"] as? Int == 0, "\(status)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox).sorted() == names)
    }

    @Test func mailboxFoldersAndFilesWaitingBeforeStart() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        // Present before the daemon starts: the start-up scan must deliver them.
        try harness.drop("early.pdb", Self.pdb)
        try harness.drop("mail.pdb", Self.pdb, mailbox: "Mail")
        try harness.start()
        #expect(harness.waitFor(harness.sandbox(Self.molecules) + "/early.pdb"), "\(harness.daemonLog)")
        #expect(harness.waitFor(harness.sandbox(Self.molecules, mailbox: "Mail") + "/mail.pdb"))
        // A mailbox created while running is watched, then scanned.
        try harness.drop("late.txt", Array("hello\n".utf8), mailbox: "Work")
        #expect(harness.waitFor(harness.sandbox("org.docroute.textviewer", mailbox: "Work") + "/late.txt"), "\(harness.daemonLog)")
    }

    @Test func unclaimedLinksAndFIFOsAreQuarantinedWithAReason() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        try harness.drop("movie.mov", [0, 0, 0, 0x14, 0x66, 0x74, 0x79, 0x70, 0x71, 0x74])
        #expect(harness.waitFor(harness.quarantine + "/Inbox/movie.mov"), "\(harness.daemonLog)")
        #expect(harness.waitFor(harness.quarantine + "/Inbox/movie.mov.reason"))
        let reason = try String(contentsOfFile: harness.quarantine + "/Inbox/movie.mov.reason", encoding: .utf8)
        #expect(reason.contains("no handler claims"))

        // A link to a secret: the link is quarantined, the target never read.
        symlink("/etc/shadow", harness.inbox + "/shadow.txt")
        #expect(harness.waitFor(harness.quarantine + "/Inbox/shadow.txt.reason"), "\(harness.daemonLog)")
        #expect(!FileManager.default.fileExists(atPath: harness.sandbox("org.docroute.textviewer") + "/shadow.txt"))

        // A FIFO must never block the daemon: a file dropped after it still arrives.
        mkfifo(harness.root + "/fifo", 0o644)
        rename(harness.root + "/fifo", harness.inbox + "/pipe.txt")
        try harness.drop("after-fifo.pdb", Self.pdb)
        #expect(harness.waitFor(harness.sandbox(Self.molecules) + "/after-fifo.pdb"), "\(harness.daemonLog)")
        #expect(harness.waitFor(harness.quarantine + "/Inbox/pipe.txt.reason"))
    }

    @Test func inProgressNamesWaitUntilRenamed() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        try Data(Self.pdb).write(to: URL(fileURLWithPath: harness.inbox + "/slow.pdb.part"))
        try harness.drop("marker.pdb", Self.pdb)
        #expect(harness.waitFor(harness.sandbox(Self.molecules) + "/marker.pdb"))
        #expect(FileManager.default.fileExists(atPath: harness.inbox + "/slow.pdb.part"), ".part files are left alone")
        rename(harness.inbox + "/slow.pdb.part", harness.inbox + "/slow.pdb")
        #expect(harness.waitFor(harness.sandbox(Self.molecules) + "/slow.pdb"))
    }

    @Test func sandboxFolderReplacedByALinkIsNeverWrittenThrough() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        try harness.drop("first.pdb", Self.pdb)
        let sandbox = harness.sandbox(Self.molecules)
        #expect(harness.waitFor(sandbox + "/first.pdb"))
        // The handler swaps its Inbox folder for a link to somewhere else.
        let elsewhere = harness.root + "/elsewhere"
        try FileManager.default.createDirectory(atPath: elsewhere + "/Inbox", withIntermediateDirectories: true)
        try FileManager.default.removeItem(atPath: harness.containers + "/" + Self.molecules + "/Documents/Inbox")
        symlink(elsewhere, harness.containers + "/" + Self.molecules + "/Documents/Inbox")
        try harness.drop("second.pdb", Self.pdb)
        // Others are not held up.
        try harness.drop("other.txt", Array("text\n".utf8))
        #expect(harness.waitFor(harness.sandbox("org.docroute.textviewer") + "/other.txt"))
        #expect(!FileManager.default.fileExists(atPath: elsewhere + "/Inbox/second.pdb"))
        #expect(FileManager.default.fileExists(atPath: harness.inbox + "/second.pdb"), "left in the inbox to retry")
    }

    /// The short form of the crash test (`make chaos` runs the long one).
    @Test func killedAtRandomMomentsNothingIsLostOrDuplicated() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        let count = Int(ProcessInfo.processInfo.environment["DOCROUTE_CRASH_FILES"] ?? "600") ?? 600
        let restarts = Int(ProcessInfo.processInfo.environment["DOCROUTE_CRASH_RESTARTS"] ?? "3") ?? 3
        var expected: [String: [UInt8]] = [:]
        for index in 0..<count {
            expected["f\(index).pdb"] = Array("HEADER \(index)\n".utf8) + Self.pdb
        }
        try harness.start()
        let names = expected.keys.sorted()
        var next = 0
        for round in 0..<restarts {
            let share = (names.count - next) / (restarts - round)
            for name in names[next..<(next + share)] { try harness.drop(name, expected[name]!) }
            next += share
            usleep(useconds_t.random(in: 1_000...150_000))
            harness.crash()
            try harness.start()
        }
        for name in names[next...] { try harness.drop(name, expected[name]!) }
        let sandbox = harness.sandbox(Self.molecules)
        // 120 s for the short form; the long one (`make chaos`, 20,000 files in a debug build, ten
        // restarts that each list the inbox again) gets 50 files a second, or it measures speed.
        let delivered = harness.waitUntil(timeout: max(120, Double(count) / 50)) {
            ((try? FileManager.default.contentsOfDirectory(atPath: sandbox)) ?? []).filter { !$0.hasPrefix(".") }.count >= count
        }
        #expect(delivered, "\(harness.daemonLog.suffix(3000))")
        let files = try FileManager.default.contentsOfDirectory(atPath: sandbox)
        #expect(files.filter { $0.hasPrefix(".") }.isEmpty, "no temporaries left: \(files.filter { $0.hasPrefix(".") })")
        #expect(Set(files) == Set(names), "each file exactly once, under its own name")
        for name in names {
            #expect(FileManager.default.contents(atPath: sandbox + "/" + name) == Data(expected[name]!), "\(name) byte for byte")
        }
        // Sources are removed just after their copies commit.
        #expect(harness.waitUntil { ((try? FileManager.default.contentsOfDirectory(atPath: harness.inbox)) ?? ["?"]).isEmpty },
                "inbox drained: \(((try? FileManager.default.contentsOfDirectory(atPath: harness.inbox)) ?? []).prefix(5))")
        // The subscriber that connects now is owed each document once, and once it acknowledged
        // them all, nothing more.
        let client = try LineClient(path: harness.socket)
        try client.send(["type": "subscribe", "id": "1", "bundleIdentifier": Self.molecules])
        let subscribed = try #require(client.readMessage())
        #expect(subscribed["pending"] as? Int == count, "owed after the crashes: \(subscribed)")
        var seen: Set<String> = []
        for _ in 0..<count {
            guard let event = client.readMessage(), let id = event["deliveryID"] as? String else { break }
            #expect(seen.insert(id).inserted, "delivery \(id) sent twice")
            try client.send(["type": "ack", "deliveryID": id, "handled": true])
        }
        #expect(seen.count == count)
        client.close()
        #expect(harness.waitUntil {
            guard let again = try? LineClient(path: harness.socket) else { return false }
            defer { again.close() }
            try? again.send(["type": "subscribe", "id": "2", "bundleIdentifier": Self.molecules])
            return again.readMessage()?["pending"] as? Int == 0
        }, "acknowledged deliveries are owed again")
    }

    @Test func badConfigurationNamesFileLineAndKey() throws {
        let harness = try DaemonHarness(extraConfig: "max_unacknowledged = \"many\"")
        defer { harness.remove() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: DaemonHarness.binDirectory + "/docrouted")
        process.arguments = ["--config", harness.configPath]
        let pipe = Pipe()
        process.standardError = pipe
        try process.run()
        process.waitUntilExit()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 2)
        let lines = try String(contentsOfFile: harness.configPath, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        let line = try #require(lines.firstIndex { $0.hasPrefix("max_unacknowledged") }) + 1
        #expect(text.contains("\(harness.configPath):\(line): max_unacknowledged: expected an integer"), "\(text)")
    }
}
