@testable import DocRouteLedger
@testable import DocRoutePlatform
import DocRouteTestSupport
import Foundation
import SystemPackage
import Testing

/// A document's history, from the ledger: every event of a delivery, found by each of the ways an
/// operator asks (delivery id, name, path, handler, time, state); the documents that never became
/// deliveries; and the pruning after `history_days`.
@Suite struct DocumentHistoryTests {
    static let handler = "com.example.viewer"

    static func staged(_ name: String, finalName: String? = nil, seenAt: Date, handler: String = handler) -> LedgerRecord {
        LedgerRecord(
            bundleIdentifier: handler, kind: .file, mailbox: "Mail", originalName: name,
            finalPath: "/containers/\(handler)/Documents/Inbox/Mail/\(finalName ?? name)", contentType: "public.plain-text",
            size: 5, state: .staged, sourcePath: FilePath("/srv/inbox/\(name)"), sourceDevice: 1,
            sourceInode: UInt64(name.hashValue.magnitude % 1_000_000), sourceSize: 5, sourceMtimeNs: 1,
            createdAt: seenAt.addingTimeInterval(0.01),
            seenAt: seenAt, inbox: "/srv/inbox", mimeType: "text/plain", typedBy: "extension",
            routedBy: "\(handler) claims public.plain-text itself")
    }

    @Test func aDeliveredDocumentTellsItsWholeStory() async throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let ledger = try Fixtures.ledger(scratch)
        defer { try? ledger.close() }
        let seen = Date(timeIntervalSince1970: 1_790_000_000)
        let first = Self.staged("notes.txt", seenAt: seen)
        let second = Self.staged("notes.txt", finalName: "notes-1.txt", seenAt: seen.addingTimeInterval(60))
        try ledger.stage([first, second])
        let sequences = try ledger.commit([first.deliveryID, second.deliveryID], at: seen.addingTimeInterval(61))
        let told = seen.addingTimeInterval(62)
        try await ledger.acknowledge(
            [DeliveryAcknowledgement(deliveryID: first.deliveryID.protocolText, bundleIdentifier: Self.handler, handled: true)],
            notices: [first, second].map { record in
                DeliveryNotice(deliveryID: record.deliveryID.protocolText, sequence: sequences[record.deliveryID] ?? 0,
                               message: .openURL, connection: "connection 7 (pid 42 uid 1000 gid 1000)", at: told)
            })
        try ledger.markSourcesRemoved([first.deliveryID], at: seen.addingTimeInterval(63), durably: true)

        let found = try await ledger.history(HistoryQuery(deliveryID: first.deliveryID))
        let story = try #require(found.first)
        #expect(found.count == 1)
        #expect(story.state == .acknowledged)
        // In time order: the source was freed (at 63 s) before the acknowledgement (now).
        #expect(story.events.map(\.kind) == [.seen, .typed, .routed, .committed, .notified, .sourceReclaimed, .acknowledged])
        func details(_ kind: DocumentHistory.Event.Kind) -> [String: String] {
            Dictionary(uniqueKeysWithValues: (story.events.first { $0.kind == kind }?.details ?? []).map { ($0.name, $0.value) })
        }
        #expect(details(.seen) == ["inbox": "/srv/inbox", "mailbox": "Mail", "name": "notes.txt", "path": "/srv/inbox/notes.txt", "size": "5"])
        #expect(details(.typed) == ["type": "public.plain-text", "mime": "text/plain", "by": "extension"])
        #expect(details(.routed) == ["handler": Self.handler, "why": "\(Self.handler) claims public.plain-text itself"])
        #expect(details(.committed) == ["path": "/containers/\(Self.handler)/Documents/Inbox/Mail/notes.txt"])
        #expect(details(.notified) == ["by": "openURL", "to": "connection 7 (pid 42 uid 1000 gid 1000)"])
        #expect(story.events.first { $0.kind == .seen }?.at == seen)
        #expect(story.events.first { $0.kind == .notified }?.at == told)

        // The other one: committed and told, still owed; no acknowledgement, its source still there.
        let other = try #require(try await ledger.history(HistoryQuery(deliveryID: second.deliveryID)).first)
        #expect(other.state == .owed)
        #expect(other.events.map(\.kind) == [.seen, .typed, .routed, .committed, .notified])

        // By name: both, newest first; by the copy's path (the name with its counter): the second only.
        #expect(try await ledger.history(HistoryQuery(name: "notes.txt")).map(\.deliveryID) == [second.deliveryID, first.deliveryID])
        let byPath = try await ledger.history(HistoryQuery(path: "/containers/\(Self.handler)/Documents/Inbox/Mail/notes-1.txt"))
        #expect(byPath.map(\.deliveryID) == [second.deliveryID])
        #expect(try await ledger.history(HistoryQuery(path: "/srv/inbox/notes.txt")).count == 2)
        // By handler, by time, by state.
        #expect(try await ledger.history(HistoryQuery(bundleIdentifier: Self.handler)).count == 2)
        #expect(try await ledger.history(HistoryQuery(bundleIdentifier: "com.example.other")).isEmpty)
        #expect(try await ledger.history(HistoryQuery(since: seen.addingTimeInterval(30))).map(\.deliveryID) == [second.deliveryID])
        #expect(try await ledger.history(HistoryQuery(until: seen.addingTimeInterval(30))).map(\.deliveryID) == [first.deliveryID])
        #expect(try await ledger.history(HistoryQuery(bundleIdentifier: Self.handler, since: seen.addingTimeInterval(30))).map(\.deliveryID)
                == [second.deliveryID])
        #expect(try await ledger.history(HistoryQuery(state: .owed)).map(\.deliveryID) == [second.deliveryID])
        #expect(try await ledger.history(HistoryQuery(state: .acknowledged)).map(\.deliveryID) == [first.deliveryID])
        #expect(try await ledger.history(HistoryQuery(name: "notes.txt", limit: 1)).map(\.deliveryID) == [second.deliveryID])
    }

    @Test func documentsThatNeverBecameDeliveriesHaveAHistoryToo() async throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let ledger = try Fixtures.ledger(scratch)
        defer { try? ledger.close() }
        let at = Date(timeIntervalSince1970: 1_790_000_000)
        try await ledger.noteUndelivered([
            UndeliveredDocument(outcome: .quarantined, at: at, inbox: "/srv/inbox", sourcePath: "/srv/inbox/thing.xyz",
                                originalName: "thing.xyz", mailbox: "Mail", reason: "no handler claims dyn.ah62d4rv4ge81e7xx"),
            UndeliveredDocument(outcome: .skipped, at: at.addingTimeInterval(1), inbox: "/srv/mail/new/1.host", sourcePath: "/srv/mail/new/1.host",
                                originalName: "scan.tiff", mailbox: "Mail", size: 9, contentType: "public.tiff",
                                reason: "no handler claims public.tiff", messageID: "<m@example.com>", partPath: "2"),
        ])
        let quarantined = try #require(try await ledger.history(HistoryQuery(name: "thing.xyz")).first)
        #expect(quarantined.state == .quarantined && quarantined.deliveryID == nil)
        #expect(quarantined.events.map(\.kind) == [.seen, .quarantined])
        #expect(quarantined.events.last?.details.first { $0.name == "reason" }?.value == "no handler claims dyn.ah62d4rv4ge81e7xx")
        let skipped = try #require(try await ledger.history(HistoryQuery(state: .skipped)).first)
        #expect(skipped.originalName == "scan.tiff" && skipped.messageID == "<m@example.com>" && skipped.partPath == "2")
        #expect(skipped.events.map(\.kind) == [.seen, .typed, .skipped])
        #expect(try await ledger.history(HistoryQuery(path: "/srv/inbox/thing.xyz")).count == 1)
        #expect(try await ledger.history(HistoryQuery()).map(\.state) == [.skipped, .quarantined])
        #expect(try await ledger.history(HistoryQuery(bundleIdentifier: Self.handler)).isEmpty)
    }

    /// Pruning takes what is settled and older than the cutoff, and nothing a handler is still owed
    /// or recovery may still need.
    @Test func pruningKeepsWhatIsOwedOrUnsettled() async throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let ledger = try Fixtures.ledger(scratch)
        defer { try? ledger.close() }
        let old = Date().addingTimeInterval(-40 * 86_400)
        // Rows come in the order they are seen: the URL first here.
        let url = try ledger.recordURL(bundleIdentifier: Self.handler, url: "todolist://x", at: old)
        try ledger.acknowledge(deliveryIDs: [url.deliveryID], handled: true, bundleIdentifier: Self.handler, at: old)
        let settled = Self.staged("settled.txt", seenAt: old)
        let owed = Self.staged("owed.txt", seenAt: old)
        let sourceLeft = Self.staged("left.txt", seenAt: old)
        let recent = Self.staged("recent.txt", seenAt: Date())
        try ledger.stage([settled, owed, sourceLeft, recent])
        _ = try ledger.commit([settled, owed, sourceLeft, recent].map(\.deliveryID), at: old)
        try ledger.acknowledge(deliveryIDs: [settled.deliveryID, sourceLeft.deliveryID], handled: true, bundleIdentifier: Self.handler, at: old)
        try ledger.acknowledge(deliveryIDs: [recent.deliveryID], handled: false, bundleIdentifier: Self.handler)
        try ledger.markSourcesRemoved([settled.deliveryID, recent.deliveryID], at: old, durably: true)
        try await ledger.noteUndelivered([
            UndeliveredDocument(outcome: .quarantined, at: old, originalName: "old.xyz", reason: "r"),
            UndeliveredDocument(outcome: .quarantined, at: Date(), originalName: "new.xyz", reason: "r"),
        ])

        let cutoff = Date().addingTimeInterval(-30 * 86_400)
        #expect(try await ledger.pruneHistory(before: cutoff, limit: 1) == 2, "one delivery and one quarantined file per call at most")
        #expect(try await ledger.pruneHistory(before: cutoff, limit: 1_000) == 1)
        #expect(try await ledger.pruneHistory(before: cutoff, limit: 1_000) == 0)
        let left = try await ledger.history(HistoryQuery())
        #expect(Set(left.compactMap(\.originalName)) == ["owed.txt", "left.txt", "recent.txt", "new.xyz"])
        #expect(try ledger.record(deliveryID: settled.deliveryID) == nil && ledger.record(deliveryID: url.deliveryID) == nil)
        // What the daemon relies on is intact.
        #expect(try ledger.pendingEvents(bundleIdentifier: Self.handler, after: 0, limit: 10).map(\.deliveryID) == [owed.deliveryID.uuidString])
        #expect(try ledger.recordsWithSourcesKept().map(\.deliveryID) == [owed.deliveryID, sourceLeft.deliveryID])
    }

    /// The names a copy may have been given for an original name, for a lookup by path.
    @Test func aCopysNameLeadsBackToItsOriginalName() {
        #expect(DeliveryLedger.originalNames(forPathName: "notes-1.txt") == ["notes-1.txt", "notes.txt"])
        #expect(DeliveryLedger.originalNames(forPathName: "data-12.pdb.gz") == ["data-12.pdb.gz", "data.pdb.gz"])
        #expect(DeliveryLedger.originalNames(forPathName: "plain") == ["plain"])
        #expect(DeliveryLedger.originalNames(forPathName: "-1.txt") == ["-1.txt"])
    }
}
