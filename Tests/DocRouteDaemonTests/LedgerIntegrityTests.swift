@testable import DocRouteConfiguration
@testable import DocRouteDelivery
@testable import DocRouteLedger
@testable import DocRoutePlatform
import DocRouteTestSupport
import Foundation
import GRDB
import Synchronization
import SystemPackage
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A damaged, removed or replaced ledger is refused or stops the
/// daemon loudly instead of failing in silence; `--recover-ledger` rebuilds it from the
/// sandboxes; the ledger is private whatever the umask.
@Suite(.serialized) struct LedgerIntegrityTests {
    /// A ledger with `count` committed file deliveries.
    static func filledLedger(_ scratch: TemporaryFolder, count: Int) throws {
        let ledger = try Fixtures.ledger(scratch)
        var records: [LedgerRecord] = []
        for index in 0..<count {
            records.append(LedgerRecord(
                bundleIdentifier: "com.example.viewer", kind: .file, mailbox: "Mail", originalName: "doc-\(index).txt",
                finalPath: "/nowhere/doc-\(index).txt", contentType: "public.plain-text", size: 100,
                sha256: String(repeating: "ab", count: 32), annotation: String(repeating: "x", count: 200), state: .staged))
        }
        try ledger.stage(records)
        _ = try ledger.commit(records.map(\.deliveryID))
        try Self.checkpoint(ledger)
        try ledger.close()
    }

    /// Everything into ledger.sqlite, the write-ahead log emptied (as SQLite's checkpoints do).
    static func checkpoint(_ ledger: DeliveryLedger) throws {
        try ledger.pool.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
    }

    @Test func randomBytesInTheMiddlePagesAreRefusedWithTheStepsToRecover() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        try Self.filledLedger(scratch, count: 2000)
        let path = scratch.path("state/ledger.sqlite").string
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(size > 64 * 4096)
        // Random bytes over pages in the middle of the file, as in the issue.
        let handle = try #require(FileHandle(forWritingAtPath: path))
        var generator = SplitMix(seed: 16)
        for page in stride(from: size / 4096 / 3, to: size / 4096 * 2 / 3, by: 3) {
            try handle.seek(toOffset: UInt64(page * 4096 + 512))
            handle.write(Data((0..<2048).map { _ in UInt8.random(in: 0...255, using: &generator) }))
        }
        try handle.close()

        #expect {
            try Fixtures.ledger(scratch)
        } throws: { error in
            guard let error = error as? DeliveryError else { return false }
            return error.code == .ledgerDamaged && error.message.contains("damaged")
                && error.message.contains("docrouted --recover-ledger") && error.message.contains("systemctl stop docroute")
        }
    }

    @Test func aGarbageWriteAheadLogIsRefusedNotIgnored() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        try Self.filledLedger(scratch, count: 10)
        var generator = SplitMix(seed: 9)
        let garbage = Data((0..<8192).map { _ in UInt8.random(in: 0...255, using: &generator) })
        #expect(FileManager.default.createFile(atPath: scratch.path("state/ledger.sqlite-wal").string, contents: garbage))
        #expect {
            try Fixtures.ledger(scratch)
        } throws: { error in
            (error as? DeliveryError)?.code == .ledgerDamaged && (error as? DeliveryError)?.message.contains("write-ahead log") == true
        }
    }

    @Test func aHealthyLedgerWithItsWriteAheadLogOpens() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let ledger = try Fixtures.ledger(scratch)
        let record = try ledger.recordURL(bundleIdentifier: "com.example.todo", url: "todolist://a")
        // Copies of the files while open: a WAL with committed frames, as after a crash.
        let copy = try scratch.folder("copy")
        for suffix in ["", "-wal"] {
            try FileManager.default.copyItem(atPath: scratch.path("state/ledger.sqlite\(suffix)").string, toPath: copy.string + "/ledger.sqlite\(suffix)")
        }
        let size = try FileManager.default.attributesOfItem(atPath: copy.string + "/ledger.sqlite-wal")[.size] as? Int
        #expect((size ?? 0) > 32, "the copy has a write-ahead log to check")
        let reopened = try DeliveryLedger(path: FilePath(copy.string + "/ledger.sqlite"), logger: Fixtures.logger)
        #expect(try reopened.record(deliveryID: record.deliveryID)?.url == "todolist://a")
    }

    /// `rm ledger.sqlite*` (daemon stopped or not): the next start refuses instead of starting
    /// with an empty ledger that forgets what handlers are owed.
    @Test func aRemovedLedgerIsNotReplacedByAnEmptyOne() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        try Self.filledLedger(scratch, count: 3)
        for suffix in ["", "-wal", "-shm"] { unlink(scratch.path("state/ledger.sqlite\(suffix)").string) }
        #expect {
            try Fixtures.ledger(scratch)
        } throws: { error in
            (error as? DeliveryError)?.code == .ledgerDamaged && (error as? DeliveryError)?.message.contains("missing") == true
        }
        #expect(!FileManager.default.fileExists(atPath: scratch.path("state/ledger.sqlite").string), "nothing created in its place")
    }

    @Test func stateFilesArePrivateWhateverTheUmask() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let previous = umask(0o022)
        defer { umask(previous) }
        let ledger = try DeliveryLedger(stateDirectory: scratch.path("var/state"), logger: Fixtures.logger)
        _ = try ledger.recordURL(bundleIdentifier: "com.example.todo", url: "todolist://a")
        func mode(_ relative: String) -> mode_t? {
            var info = stat()
            return stat(scratch.path(relative).string, &info) == 0 ? info.st_mode & 0o777 : nil
        }
        #expect(mode("var/state") == 0o700)
        #expect(mode("var/state/ledger.sqlite") == 0o600)
        #expect(mode("var/state/ledger.sqlite-wal") == 0o600)
        #expect(mode("var/state/ledger.sqlite-shm") == 0o600)
        try ledger.close()
        // A ledger an older docrouted left 0644 is made private when opened.
        chmod(scratch.path("var/state/ledger.sqlite").string, 0o644)
        _ = try DeliveryLedger(stateDirectory: scratch.path("var/state"), logger: Fixtures.logger)
        #expect(mode("var/state/ledger.sqlite") == 0o600)
    }

    /// Removed while in use: a batch still commits (into the removed file), but its sources stay
    /// in the inbox, and the damage is reported, so the daemon stops before anything is lost.
    @Test func aLedgerRemovedWhileInUseKeepsTheSourcesAndIsReported() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let container = try scratch.folder("containers/com.example.viewer")
        let inbox = try TestInbox(scratch.path("inbox"))
        defer { inbox.close() }
        try scratch.write("inbox/a.txt", "a")
        let ledger = try Fixtures.ledger(scratch)
        let reported = Mutex<[DeliveryError]>([])
        ledger.onDamage { error in reported.withLock { $0.append(error) } }
        let batch = DeliveryBatch(ledger: ledger, logger: Fixtures.logger)
        #expect(unlink(scratch.path("state/ledger.sqlite").string) == 0)
        _ = batch.deliver([try inbox.request("a.txt", container: container)])
        #expect(scratch.list("inbox") == ["a.txt"], "the source stays: its commit went to a removed file")
        #expect(reported.withLock { $0.map(\.code) } == [.ledgerDamaged])
    }

    @Test func theWatchReportsALedgerRemovedOrReplaced() throws {
        for replace in [false, true] {
            let scratch = try TemporaryFolder()
            defer { scratch.remove() }
            let ledger = try Fixtures.ledger(scratch)
            _ = try ledger.recordURL(bundleIdentifier: "com.example.todo", url: "todolist://a")
            let reported = Mutex<[String]>([])
            let watch = try LedgerWatch(ledger: ledger, logger: Fixtures.logger) { error in reported.withLock { $0.append(error.message) } }
            defer { watch.stop() }
            usleep(100_000)
            #expect(reported.withLock { $0 }.isEmpty, "nothing to report while the ledger is in place")
            let wal = scratch.path("state/ledger.sqlite-wal").string
            if replace {
                try scratch.write("state/other", "x")
                #expect(rename(scratch.path("state/other").string, wal) == 0)
            } else {
                #expect(unlink(wal) == 0)
            }
            let deadline = Date().addingTimeInterval(5)
            while reported.withLock({ $0.isEmpty }) && Date() < deadline { usleep(20_000) }
            let messages = reported.withLock { $0 }
            #expect(messages.count == 1, "\(messages)")
            #expect(messages.first?.contains("ledger.sqlite-wal") == true && messages.first?.contains("--recover-ledger") == true, "\(messages)")
        }
    }

    /// `docrouted --recover-ledger`: the damaged files are kept aside; every document in the
    /// sandboxes gets a row again; an acknowledged one the old ledger still shows stays
    /// acknowledged, the others are owed to their handler (with the same identifiers when the old
    /// rows can be read).
    @Test func recoverLedgerRebuildsFromTheSandboxes() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let containers = try scratch.folder("containers")
        let container = try scratch.folder("containers/com.example.viewer")
        try scratch.folder("handlers")
        let inbox = try TestInbox(scratch.path("inbox"))
        defer { inbox.close() }
        let names = ["a.txt", "b.txt", "c.txt"]
        for (index, name) in names.enumerated() { try scratch.write("inbox/\(name)", Fixtures.content(index, size: 300)) }
        let ledger = try Fixtures.ledger(scratch)
        let batch = DeliveryBatch(ledger: ledger, logger: Fixtures.logger)
        let outcomes = batch.deliver(try names.map { try inbox.request($0, container: container) })
        let ids = outcomes.compactMap { outcome -> UUID? in if case .committed(let record) = outcome { record.deliveryID } else { nil } }
        #expect(ids.count == 3)
        let digests = outcomes.compactMap { outcome -> String? in if case .committed(let record) = outcome { record.sha256 } else { nil } }
        try ledger.acknowledge(deliveryIDs: [ids[0]], handled: true, bundleIdentifier: "com.example.viewer")
        _ = try ledger.recordURL(bundleIdentifier: "com.example.todo", url: "todolist://owed")
        try ledger.close()
        let configuration = try DaemonConfiguration.parse("""
            state_directory = "\(scratch.path("state").string)"
            containers_directory = "\(containers.string)"
            handlers_directory = "\(scratch.path("handlers").string)"
            quarantine_directory = "\(scratch.path("quarantine").string)"
            socket = "\(scratch.path("s.sock").string)"
            """, file: "test.toml")

        let report = try LedgerRebuild.run(configuration: configuration, logger: Fixtures.logger)

        #expect(report.documents == 3 && report.kept == 3 && report.owed == 0 && report.urls == 1, "\(report)")
        #expect(report.damagedFiles.first?.contains("ledger.sqlite.damaged-") == true)
        #expect(report.damagedFiles.allSatisfy { FileManager.default.fileExists(atPath: $0) }, "kept aside")
        let rebuilt = try Fixtures.ledger(scratch)
        let pending = try rebuilt.pending(bundleIdentifier: "com.example.viewer")
        #expect(Set(pending.map(\.deliveryID)) == Set(ids[1...]), "the acknowledged one stays acknowledged")
        #expect(try rebuilt.record(deliveryID: ids[0])?.state == .acknowledged)
        #expect(try rebuilt.pending(bundleIdentifier: "com.example.todo").map(\.url) == ["todolist://owed"])
        try Self.checkpoint(rebuilt)
        try rebuilt.close()

        // Now with nothing readable: every document is owed again, found by its path and digest.
        for suffix in ["-wal", "-shm"] { unlink(scratch.path("state/ledger.sqlite\(suffix)").string) }
        let garbage = Data((0..<65536).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
        #expect(FileManager.default.createFile(atPath: scratch.path("state/ledger.sqlite").string, contents: garbage))
        #expect(throws: DeliveryError.self) { try Fixtures.ledger(scratch) }
        // Run as root for a daemon of its own uid (the unit's docroute): the new files are that uid's.
        let serviceUser: UInt32 = 48_124
        if geteuid() == 0 { chown(scratch.path("state").string, serviceUser, serviceUser) }
        let second = try LedgerRebuild.run(configuration: configuration, logger: Fixtures.logger, now: Date().addingTimeInterval(5))
        #expect(second.documents == 3 && second.owed == 3 && second.kept == 0, "\(second)")
        if geteuid() == 0 {
            var info = stat()
            #expect(stat(scratch.path("state/ledger.sqlite").string, &info) == 0 && info.st_uid == serviceUser, "the service can open it")
        }
        let again = try Fixtures.ledger(scratch)
        let owed = try again.pending(bundleIdentifier: "com.example.viewer")
        #expect(owed.compactMap(\.finalPath) == names.map { container.string + "/Documents/Inbox/Mail/" + $0 })
        #expect(owed.map(\.sha256) == digests, "the digests the copies had when delivered")
        #expect(owed.allSatisfy { $0.contentType == "public.plain-text" }, "\(owed.map(\.contentType))")
    }
}
