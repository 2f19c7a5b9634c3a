@testable import DocRouteDelivery
@testable import DocRouteLedger
@testable import DocRoutePlatform
import DocRouteTestSupport
import Foundation
import SystemPackage
import Testing

@Suite struct DeliveryLedgerTests {
    func stagedFile(_ name: String, bundle: String = "com.example.viewer") -> LedgerRecord {
        LedgerRecord(
            bundleIdentifier: bundle, kind: .file, mailbox: "Mail", originalName: name,
            finalPath: "/containers/\(bundle)/Documents/Inbox/Mail/\(name)", size: 1, state: .staged,
            sourcePath: FilePath("/inbox/\(name)"), sourceDevice: 1, sourceInode: UInt64(name.hashValue.magnitude), sourceSize: 1, sourceMtimeNs: 1)
    }

    @Test func pendingIsInCommitOrderAndAcknowledgedIsNeverPendingAgain() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let ledger = try Fixtures.ledger(scratch)
        let files = ["a", "b", "c"].map { stagedFile($0) }
        try ledger.stage(files)
        // A URL recorded while the files are staged is committed first, so it comes first.
        let url = try ledger.recordURL(bundleIdentifier: "com.example.viewer", url: "todolist://www.acme.com?Quarterly%20Report#200806231300", sourceApplication: "com.example.mail")
        _ = try ledger.commit(files.map(\.deliveryID))
        let other = try ledger.recordURL(bundleIdentifier: "com.example.other", url: "other://x")

        let pending = try ledger.pending(bundleIdentifier: "com.example.viewer")
        #expect(pending.map(\.deliveryID) == [url.deliveryID] + files.map(\.deliveryID))
        let sequences = pending.map(\.sequence)
        #expect(sequences == sequences.sorted() && Set(sequences).count == 4 && sequences[0] > 0, "\(sequences)")
        #expect(pending.first?.kind == .url)
        #expect(pending.first?.eventURL == "todolist://www.acme.com?Quarterly%20Report#200806231300")
        #expect(try ledger.pending(bundleIdentifier: "com.example.viewer", after: sequences[1], limit: 1).map(\.sequence) == [sequences[2]])
        // The dispatcher's narrow read says the same of each delivery as the whole record.
        let events = try ledger.pendingEvents(bundleIdentifier: "com.example.viewer", after: 0, limit: 100)
        #expect(events == pending.map {
            PendingEvent(sequence: $0.sequence, deliveryID: $0.deliveryID.uuidString, kind: $0.kind, url: $0.url, finalPath: $0.finalPath,
                         contentType: $0.contentType, mailbox: $0.mailbox, sourceApplication: $0.sourceApplication, annotation: $0.annotation)
        })
        #expect(events.first?.sourceApplication == "com.example.mail" && events.last?.mailbox == "Mail")
        #expect(try ledger.pendingEvents(bundleIdentifier: "com.example.viewer", after: sequences[1], limit: 1).map(\.sequence) == [sequences[2]])
        #expect(try ledger.pendingCount(bundleIdentifier: "com.example.viewer") == 4)
        #expect(other.sequence > sequences[3])

        let unknownID = UUID()
        let unknown = try ledger.acknowledge(deliveryIDs: [url.deliveryID, files[1].deliveryID, unknownID, other.deliveryID], handled: true, bundleIdentifier: "com.example.viewer")
        #expect(unknown == [unknownID, other.deliveryID])
        #expect(try ledger.acknowledge(deliveryIDs: [files[0].deliveryID], handled: false, bundleIdentifier: "com.example.viewer") == [])
        // Again: known, already settled, not an error, unchanged.
        #expect(try ledger.acknowledge(deliveryIDs: [files[0].deliveryID], handled: true, bundleIdentifier: "com.example.viewer") == [])
        #expect(try ledger.record(deliveryID: files[0].deliveryID)?.state == .declined)
        #expect(try ledger.record(deliveryID: url.deliveryID)?.acknowledgedAt != nil)

        #expect(try ledger.pending(bundleIdentifier: "com.example.viewer").map(\.deliveryID) == [files[2].deliveryID])
        #expect(try ledger.pendingCount(bundleIdentifier: "com.example.viewer") == 1)
        #expect(try ledger.pending(bundleIdentifier: "com.example.other").map(\.deliveryID) == [other.deliveryID])
    }

    /// A batch's lookup of earlier deliveries probes the inodes 64 at a time first: whatever a
    /// batch holds (more than one probe, two devices, an inode recorded for another file), it finds
    /// exactly the sources delivered before, as one read per source would.
    @Test func earlierDeliveriesAreFoundAcrossProbesAndDevices() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let ledger = try Fixtures.ledger(scratch)
        func record(_ index: Int, device: UInt64) -> LedgerRecord {
            LedgerRecord(bundleIdentifier: "com.example.viewer", kind: .file, mailbox: "Mail", originalName: "f\(index)",
                         finalPath: "/containers/com.example.viewer/Documents/Inbox/Mail/f\(index)", size: 1, state: .staged,
                         sourcePath: FilePath("/inbox/f\(index)"), sourceDevice: device, sourceInode: UInt64(1000 + index),
                         sourceSize: 1, sourceMtimeNs: 7)
        }
        // Delivered before: sources 3, 70 and 140 on device 1, 5 on device 2; 99 staged only.
        let delivered = [record(3, device: 1), record(70, device: 1), record(140, device: 1), record(5, device: 2)]
        try ledger.stage(delivered + [record(99, device: 1)])
        _ = try ledger.commit(delivered.map(\.deliveryID))

        var sources: [(status: FileStatus, path: FilePath)] = (0..<150).map { index in
            (FileStatus(device: 1, inode: UInt64(1000 + index), size: 1, modificationTimeNanoseconds: 7), FilePath("/inbox/f\(index)"))
        }
        sources.append((FileStatus(device: 2, inode: 1005, size: 1, modificationTimeNanoseconds: 7), FilePath("/inbox/f5")))
        // The inode of a delivered source, but another file now (rewritten: another mtime).
        sources.append((FileStatus(device: 1, inode: 1003, size: 1, modificationTimeNanoseconds: 8), FilePath("/inbox/f3")))

        var asked: Set<Int> = []
        let found = try ledger.deliveredRecords(forSources: sources, isTakenOut: { asked.insert($0); return false })

        #expect(found.keys.sorted() == [3, 70, 140, 150])
        // Only sources whose inode a row records are looked at by name.
        #expect(asked.sorted() == [3, 70, 99, 140, 150, 151])
        #expect(found[70]?.deliveryID == delivered[1].deliveryID)
        #expect(found[150]?.deliveryID == delivered[3].deliveryID)
        #expect(try ledger.deliveredRecords(forSources: []).isEmpty)

        // The batch before took source 3 out of its inbox and noted it between the look at its
        // name and the read: looking again after the miss finds it delivered.
        try ledger.markSourcesRemoved([delivered[0].deliveryID], durably: true)
        var looks = 0
        let seenLate = try ledger.deliveredRecords(forSources: [sources[3]], isTakenOut: { _ in looks += 1; return looks > 1 })
        #expect(seenLate[0]?.deliveryID == delivered[0].deliveryID)
        #expect(looks == 2)
        #expect(try ledger.deliveredRecords(forSources: [sources[3]]).isEmpty, "a file still under the name of a source taken out is a new one")
    }

    @Test func stagedDeliveriesAreNeitherPendingNorAcknowledgeable() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let ledger = try Fixtures.ledger(scratch)
        let file = stagedFile("a")
        try ledger.stage([file])
        #expect(try ledger.pending(bundleIdentifier: "com.example.viewer").isEmpty)
        #expect(try ledger.acknowledge(deliveryIDs: [file.deliveryID], handled: true, bundleIdentifier: "com.example.viewer") == [file.deliveryID])
        #expect(try ledger.record(deliveryID: file.deliveryID)?.sequence == 0)
    }

    @Test func sequencesNeverRepeatAfterDiscards() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let ledger = try Fixtures.ledger(scratch)
        let first = [stagedFile("a"), stagedFile("b")]
        try ledger.stage(first)
        _ = try ledger.commit([first[0].deliveryID], discarding: [first[1].deliveryID])
        let second = stagedFile("c")
        try ledger.stage([second])
        let sequences = try ledger.commit([second.deliveryID])
        let firstSequence = try #require(try ledger.record(deliveryID: first[0].deliveryID)).sequence
        #expect(firstSequence > 0 && (sequences[second.deliveryID] ?? 0) > firstSequence)
        #expect(try ledger.record(deliveryID: first[1].deliveryID) == nil)
    }

    @Test func theLedgerSurvivesReopening() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let url: LedgerRecord
        do {
            let ledger = try Fixtures.ledger(scratch)
            url = try ledger.recordURL(bundleIdentifier: "com.example.viewer", url: "todolist://x", annotation: #"{"k":"v"}"#)
        }
        let reopened = try Fixtures.ledger(scratch)
        let pending = try reopened.pending(bundleIdentifier: "com.example.viewer")
        #expect(pending.map(\.deliveryID) == [url.deliveryID])
        #expect(pending.first?.url == "todolist://x")
        #expect(pending.first?.annotation == #"{"k":"v"}"#)
        #expect(pending.first?.sequence == url.sequence)
        #expect(FileManager.default.fileExists(atPath: scratch.path("state/ledger.sqlite").string))
        let journal = try reopened.pool.read { try String.fetchOne($0, sql: "PRAGMA journal_mode") }
        let synchronous = try reopened.pool.read { try Int.fetchOne($0, sql: "PRAGMA synchronous") }
        #expect(journal == "wal")
        #expect(synchronous == 2)  // FULL
    }

    @Test func statisticsCountPerHandlerAndState() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let ledger = try Fixtures.ledger(scratch)
        let yesterday = Date().addingTimeInterval(-86_400 * 2)
        let old = try ledger.recordURL(bundleIdentifier: "com.example.a", url: "a://old", at: yesterday)
        _ = try ledger.recordURL(bundleIdentifier: "com.example.a", url: "a://1")
        _ = try ledger.recordURL(bundleIdentifier: "com.example.b", url: "b://1")
        try ledger.stage([stagedFile("s", bundle: "com.example.b")])
        try ledger.acknowledge(deliveryIDs: [old.deliveryID], handled: true, bundleIdentifier: "com.example.a")

        let stats = try ledger.stats()
        #expect(stats.count("com.example.a", .acknowledged) == 1)
        #expect(stats.count("com.example.a", .committed) == 1)
        #expect(stats.count("com.example.b", .committed) == 1)
        #expect(stats.count("com.example.b", .staged) == 1)
        #expect(stats.deliveredToday == 2)
        #expect(stats.deliveredTodayByHandler == ["com.example.a": 1, "com.example.b": 1])
    }

    @Test func mailAttachmentsAreFoundByMessageAndPart() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let ledger = try Fixtures.ledger(scratch)
        var file = stagedFile("att.pdb")
        file.messageID = "<m1@example.com>"
        file.partPath = "2.1"
        try ledger.stage([file])
        // Staged is not delivered: a crash before the commit must deliver the part again.
        #expect(try ledger.deliveredParts(messageID: "<m1@example.com>", mailbox: "Mail").isEmpty)
        _ = try ledger.commit([file.deliveryID])
        #expect(try ledger.deliveredParts(messageID: "<m1@example.com>", mailbox: "Mail") == ["2.1"])
        // The same message in another mailbox (a copy in another folder) is owed its own parts.
        #expect(try ledger.deliveredParts(messageID: "<m1@example.com>", mailbox: "Work").isEmpty)
        #expect(try ledger.deliveredParts(messageID: "<m2@example.com>", mailbox: "Mail").isEmpty)
    }

    @Test func anUnwritableStateDirectoryIsALedgerError() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        try scratch.write("state", "a file, not a folder")
        #expect {
            try Fixtures.ledger(scratch)
        } throws: { error in
            (error as? DeliveryError)?.code == .ledger && (error as? DeliveryError)?.message.contains("state") == true
        }
    }
}
