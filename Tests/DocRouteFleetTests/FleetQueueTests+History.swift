import DocRouteConfiguration
import DocRouteFleet
import DocRouteTestSupport
import Foundation
import Testing

/// The fleet's part of a document's history, in a real PostgreSQL: what intake, claims, a lease
/// that runs out and acknowledgements record in `history_events`, each by its host, and what
/// ``FleetQueue/history(_:including:)`` finds by id, name, path, handler and state. In the
/// queue's suite, so that its servers start one at a time.
extension FleetQueueTests {
    @Test func aDeliveryClaimedAgainAfterALeaseRanOutTellsEachHostsPart() async throws {
        try await withFleet { fleet in
            let descriptor = try fleet.source("leased.pdf", Array("leased bytes".utf8))
            defer { try? descriptor.close() }
            let alpha = try fleet.queue(host: "alpha", leaseSeconds: 2)
            let beta = try fleet.queue(host: "beta", leaseSeconds: 2)
            var document = FleetQueueTests.document("leased.pdf", descriptor, size: 12)
            document.intakeDetailJSON = #"{"path": "/srv/inbox/leased.pdf", "inbox": "/srv/inbox", "handler": "com.example.viewer"}"#
            try await alpha.enqueue([document])
            _ = try await alpha.claim(handler: FleetQueueTests.handler, limit: 5)
            try await Task.sleep(for: .milliseconds(2500))
            _ = try await beta.claim(handler: FleetQueueTests.handler, limit: 5)
            try await beta.record([FleetQueue.HistoryRecord(deliveryID: document.deliveryID, event: "written", at: Date(),
                                                             detailJSON: #"{"path": "/sandbox/leased.pdf"}"#)])
            _ = try await beta.acknowledge([document.deliveryID], handled: false)

            let found = try await alpha.history(FleetHistoryQuery(deliveryID: document.deliveryID))
            #expect(found.count == 1)
            let story = try #require(found.first)
            #expect(story.events.map { "\($0.event)@\($0.host)" }
                    == ["committed@alpha", "claimed@alpha", "leaseExpired@alpha", "claimed@beta", "written@beta", "declined@beta"])
            #expect(story.name == "leased.pdf")
            #expect(story.intakeHost == "alpha")
            #expect(story.state == "acknowledged")
            #expect(story.handled == false)
            #expect(story.events.first?.detailJSON.contains("/srv/inbox/leased.pdf") == true)
            #expect(story.events.first { $0.event == "claimed" && $0.host == "beta" }?.detailJSON.contains(#""attempt": 2"#) == true)

            // Found by what an operator gives: its name, a path it had on any host, its handler, its state.
            for query in [FleetHistoryQuery(name: "leased.pdf"), FleetHistoryQuery(path: "/srv/inbox/leased.pdf"),
                          FleetHistoryQuery(path: "/sandbox/leased.pdf"), FleetHistoryQuery(bundleIdentifier: FleetQueueTests.handler),
                          FleetHistoryQuery(states: ["acknowledged"], handled: false)] {
                #expect(try await beta.history(query).map(\.deliveryID) == [document.deliveryID], "\(query)")
            }
            for query in [FleetHistoryQuery(name: "other.pdf"), FleetHistoryQuery(path: "/elsewhere/leased.pdf"),
                          FleetHistoryQuery(states: ["owed", "claimed"]), FleetHistoryQuery(since: Date().addingTimeInterval(60))] {
                #expect(try await beta.history(query).isEmpty, "\(query)")
            }
            // A delivery asked for by id comes whatever the rest of the query says.
            #expect(try await beta.history(FleetHistoryQuery(name: "other.pdf"), including: [document.deliveryID]).count == 1)
        }
    }

    @Test func aDeliveryGivenBackSaysByWhichHost() async throws {
        try await withFleet { fleet in
            let descriptor = try fleet.source("back.pdf", Array("back".utf8))
            defer { try? descriptor.close() }
            let alpha = try fleet.queue(host: "alpha")
            let beta = try fleet.queue(host: "beta")
            let document = FleetQueueTests.document("back.pdf", descriptor, size: 4)
            try await alpha.enqueue([document])
            _ = try await beta.claim(handler: FleetQueueTests.handler, limit: 1)
            try await alpha.release([document.deliveryID])
            try await beta.release([document.deliveryID])
            let story = try #require(try await alpha.history(FleetHistoryQuery(deliveryID: document.deliveryID)).first)
            #expect(story.events.map { "\($0.event)@\($0.host)" } == ["committed@alpha", "claimed@beta", "released@beta"],
                    "alpha held nothing to give back")
            #expect(story.state == "owed")
        }
    }
}
