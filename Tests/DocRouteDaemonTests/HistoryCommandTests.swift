@testable import DocRouteLedger
@testable import DocRoutePlatform
import DocRouteProtocol
import DocRouteTestSupport
import Foundation
import SystemPackage
import Testing

/// What `docroutectl history` and `redeliver` rest on: the times an operator types, a document's
/// timeline as printed, its JSON, and a settled delivery made owed again.
@Suite struct HistoryCommandTests {
    static let now = LocalTime(year: 2026, month: 11, day: 26, hour: 14, minute: 30, second: 15).date!

    @Test func timesAsPeopleTypeThem() throws {
        let now = Self.now
        #expect(HistoryTime.parse("10:02", now: now) == LocalTime(year: 2026, month: 11, day: 26, hour: 10, minute: 2).date)
        #expect(HistoryTime.parse("10:02:30", now: now) == LocalTime(year: 2026, month: 11, day: 26, hour: 10, minute: 2, second: 30).date)
        #expect(HistoryTime.parse("2026-11-25 10:02", now: now) == LocalTime(year: 2026, month: 11, day: 25, hour: 10, minute: 2).date)
        #expect(HistoryTime.parse("2026-11-25T23:59:59", now: now) == LocalTime(year: 2026, month: 11, day: 25, hour: 23, minute: 59, second: 59).date)
        #expect(HistoryTime.parse("2026-11-20", now: now) == LocalTime(year: 2026, month: 11, day: 20).date)
        #expect(HistoryTime.parse("90s", now: now) == now.addingTimeInterval(-90))
        #expect(HistoryTime.parse("15m", now: now) == now.addingTimeInterval(-900))
        #expect(HistoryTime.parse("1h", now: now) == now.addingTimeInterval(-3_600))
        #expect(HistoryTime.parse("2d", now: now) == now.addingTimeInterval(-172_800))
        #expect(HistoryTime.parse(" 1h ", now: now) == now.addingTimeInterval(-3_600))
        for bad in ["", "yesterday", "10", "25:00", "10:60", "10:02:61", "2026-13-01", "2026-02-30", "26-11-2026", "-5m", "+5m",
                    "1w", "h", "2026-11-26 10", "10:02 2026-11-26 x", "１０:02"] {
            #expect(HistoryTime.parse(bad, now: now) == nil, "\(bad) should not read as a time")
        }
        #expect(HistoryTime.acceptedForms.contains("HH:MM"))
        #expect(HistoryTime.acceptedForms.contains("90s, 15m, 1h, 2d"))
    }

    static func delivered() -> DocumentHistory {
        let seen = Date(timeIntervalSince1970: 1_795_687_323)  // 2026-11-26 10:02:03 UTC
        var history = DocumentHistory(deliveryID: UUID(uuidString: "6F1C2A3B-0000-4000-8000-000000000001")!, state: .acknowledged)
        history.originalName = "notes.txt"
        history.inbox = "/srv/inbox"
        history.sourcePath = "/srv/inbox/notes.txt"
        history.mailbox = "inbox"
        history.size = 12
        history.contentType = "public.plain-text"
        history.mimeType = "text/plain"
        history.typedBy = "extension"
        history.bundleIdentifier = "com.example.viewer"
        history.routedBy = "default"
        history.finalPath = "/var/lib/docroute/containers/com.example.viewer/Documents/Inbox/inbox/notes.txt"
        history.seenAt = seen
        history.committedAt = seen.addingTimeInterval(0.2)
        history.notifiedAt = seen.addingTimeInterval(0.3)
        history.notifiedBy = "openURL"
        history.notifiedTo = "connection 3 (pid 42 uid 1000 gid 1000)"
        history.sourceRemovedAt = seen.addingTimeInterval(0.5)
        history.settledAt = seen.addingTimeInterval(86_400 + 2)
        return history
    }

    /// The host's zone would make the expected text depend on the machine: read the clock in UTC.
    static func utc(_ date: Date) -> LocalTime {
        let stamp = UTCTimestamp(date)
        return LocalTime(year: stamp.year, month: stamp.month, day: stamp.day, hour: stamp.hour, minute: stamp.minute, second: stamp.second)
    }

    @Test func aTimelineReadsAsTheDocumentWent() {
        let lines = Self.delivered().timeline(localTime: Self.utc)
        #expect(lines == [
            "notes.txt  delivery 6f1c2a3b-0000-4000-8000-000000000001  acknowledged  (com.example.viewer)",
            "  2026-11-26 10:02:03  seen         inbox /srv/inbox, mailbox inbox, name notes.txt, path /srv/inbox/notes.txt, size 12 bytes",
            // Typed and routed as it was seen: the ledger keeps no time of their own.
            "                       typed        public.plain-text, mime text/plain, by extension",
            "                       routed       handler com.example.viewer, why default",
            "             10:02:03  committed    path /var/lib/docroute/containers/com.example.viewer/Documents/Inbox/inbox/notes.txt",
            "             10:02:03  told         by openURL, on connection 3 (pid 42 uid 1000 gid 1000)",
            "             10:02:03  source freed",
            "  2026-11-27 10:02:05  acknowledged",
        ])
    }

    @Test func aMailPartAndAQuarantinedFileSayWhereTheyCameFromAndWhy() {
        var part = DocumentHistory(deliveryID: nil, state: .skipped)
        part.originalName = "invoice.xyz"
        part.mailbox = "Mail"
        part.messageID = "<m1@example.com>"
        part.partPath = "2"
        part.reason = "no handler claims dyn.ah62d4rv4ge81e7xx"
        part.seenAt = Date(timeIntervalSince1970: 1_795_687_323)
        #expect(part.timeline(localTime: Self.utc) == [
            "invoice.xyz  (no delivery)  skipped",
            "  2026-11-26 10:02:03  seen         mailbox Mail, name invoice.xyz, message <m1@example.com>, part 2",
            "             10:02:03  skipped      reason no handler claims dyn.ah62d4rv4ge81e7xx",
        ])
    }

    @Test func aRedeliveryShowsEachRound() {
        var history = Self.delivered()
        let first = history.settledAt!
        history.earlierRounds = [DocumentHistory.Round(notifiedAt: history.notifiedAt, notifiedBy: "openURL", notifiedTo: "connection 3",
                                                       settled: .declined, settledAt: history.seenAt!.addingTimeInterval(1), redeliveredAt: first)]
        history.notifiedAt = first.addingTimeInterval(0.1)
        history.notifiedTo = "connection 9"
        history.settledAt = first.addingTimeInterval(5)
        #expect(history.events.map(\.kind) == [.seen, .typed, .routed, .committed, .notified, .sourceReclaimed, .declined, .redelivered,
                                               .notified, .acknowledged])
        #expect(history.timeline(localTime: Self.utc).contains(
            "  2026-11-27 10:02:05  redelivered  path /var/lib/docroute/containers/com.example.viewer/Documents/Inbox/inbox/notes.txt"))
    }

    @Test func theJSONReadsBackAsTheSameDocument() throws {
        var history = Self.delivered()
        history.earlierRounds = [DocumentHistory.Round(settled: .declined, settledAt: history.seenAt!.addingTimeInterval(2), redeliveredAt: history.settledAt!)]
        let json = history.json
        var back = try #require(DocumentHistory(json: json))
        // The events come back as given (in a fleet, some were told by other hosts).
        #expect(back.events == history.events)
        back.givenEvents = nil
        #expect(back == history)
        let object = try #require(json.objectValue)
        #expect(object["seenAt"] == "2026-11-26T10:02:03.000Z")
        #expect(object["state"] == "acknowledged")
        guard case .array(let events)? = object["events"] else { Issue.record("no events"); return }
        #expect(events.compactMap { $0.objectValue?["event"]?.stringValue }
                == ["seen", "typed", "routed", "committed", "notified", "sourceReclaimed", "declined", "redelivered", "acknowledged"])
    }

    @Test func aDeclinedDeliveryIsOwedAgainAfterEverythingElse() async throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let ledger = try Fixtures.ledger(scratch)
        defer { try? ledger.close() }
        let seen = Date(timeIntervalSince1970: 1_790_000_000)
        let declined = DocumentHistoryTests.staged("notes.txt", seenAt: seen)
        let later = DocumentHistoryTests.staged("later.txt", seenAt: seen.addingTimeInterval(1))
        try ledger.stage([declined, later])
        let sequences = try ledger.commit([declined.deliveryID, later.deliveryID], at: seen.addingTimeInterval(2))
        try await ledger.acknowledge(
            [DeliveryAcknowledgement(deliveryID: declined.deliveryID.protocolText, bundleIdentifier: DocumentHistoryTests.handler, handled: false)],
            notices: [DeliveryNotice(deliveryID: declined.deliveryID.protocolText, sequence: sequences[declined.deliveryID] ?? 0,
                                     message: .openURL, connection: "connection 3", at: seen.addingTimeInterval(3))])
        #expect(try await ledger.history(HistoryQuery(state: .declined)).map(\.deliveryID) == [declined.deliveryID])

        // The decline was written at the current time: the redelivery comes after it.
        let again = try await ledger.redeliver([declined.deliveryID, later.deliveryID], at: Date().addingTimeInterval(1))
        // Only the settled one is sent again, with a sequence after the one still owed.
        #expect(Array(again.keys) == [declined.deliveryID])
        let sequence = try #require(again[declined.deliveryID])
        #expect(sequence > (sequences[later.deliveryID] ?? .max))
        let owed = try await ledger.owed(bundleIdentifier: DocumentHistoryTests.handler, afterSequence: sequences[later.deliveryID] ?? 0, limit: 10)
        #expect(owed.map(\.event.deliveryID) == [declined.deliveryID.protocolText])

        let story = try #require(try await ledger.history(HistoryQuery(deliveryID: declined.deliveryID)).first)
        #expect(story.state == .owed)
        #expect(story.events.map(\.kind) == [.seen, .typed, .routed, .committed, .notified, .declined, .redelivered])
        #expect(story.earlierRounds.first?.notifiedTo == "connection 3")
        // Asked again before anyone settled it, nothing changes.
        #expect(try await ledger.redeliver([declined.deliveryID], at: Date().addingTimeInterval(2)).isEmpty)
    }

    @Test func theHistoryReadsWithTheLedgerOpenReadOnly() async throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let ledger = try Fixtures.ledger(scratch)
        defer { try? ledger.close() }
        let record = DocumentHistoryTests.staged("notes.txt", seenAt: Date(timeIntervalSince1970: 1_790_000_000))
        try ledger.stage([record])
        _ = try ledger.commit([record.deliveryID], at: Date(timeIntervalSince1970: 1_790_000_001))
        let found = try DeliveryLedger.readHistory(HistoryQuery(name: "notes.txt"), ledgerAt: ledger.path.string)
        #expect(found.map(\.deliveryID) == [record.deliveryID])
        #expect(found.first?.state == .owed)
    }
}
