import DocRouteFleet
import Foundation
import Testing

/// The launch decision in a real PostgreSQL: which handlers are owed and subscribed nowhere, one
/// host chosen and recorded under the handler's lock, and the record forgotten once it subscribes.
extension FleetQueueTests {
    static let launched = "com.example.ocr"

    /// Hosts a (no launch command), b (launch command, 1 claim) and c (launch command, 3 claims),
    /// all live, and two deliveries owed to ``launched``.
    func seedLaunchFleet(_ fleet: Fleet) async throws {
        try await fleet.sql("""
            INSERT INTO hosts (name, registry_digest, docroute_version, started_at, last_heartbeat, lease_seconds, launchable)
            VALUES ('a', 'd', '0', now(), now(), 30, '{}'),
                   ('b', 'd', '0', now(), now(), 30, '{\(Self.launched)}'),
                   ('c', 'd', '0', now(), now(), 30, '{\(Self.launched)}');
            INSERT INTO documents (id, intake_host, source_identity, name, size)
            VALUES ('00000000-0000-0000-0000-000000000001', 'a', 's1', 'scan.pdf', 1);
            INSERT INTO deliveries (id, document_id, handler, mailbox, state, claimed_by, lease_until)
            VALUES ('00000000-0000-0000-0000-0000000000d1', '00000000-0000-0000-0000-000000000001', '\(Self.launched)', 'Inbox', 'owed', NULL, NULL),
                   ('00000000-0000-0000-0000-0000000000d2', '00000000-0000-0000-0000-000000000001', '\(Self.launched)', 'Inbox', 'owed', NULL, NULL),
                   ('00000000-0000-0000-0000-0000000000e1', '00000000-0000-0000-0000-000000000001', 'com.example.other', 'Inbox', 'claimed', 'b', now() + interval '1 hour'),
                   ('00000000-0000-0000-0000-0000000000e2', '00000000-0000-0000-0000-000000000001', 'com.example.other', 'Inbox', 'claimed', 'c', now() + interval '1 hour'),
                   ('00000000-0000-0000-0000-0000000000e3', '00000000-0000-0000-0000-000000000001', 'com.example.other', 'Inbox', 'claimed', 'c', now() + interval '1 hour'),
                   ('00000000-0000-0000-0000-0000000000e4', '00000000-0000-0000-0000-000000000001', 'com.example.other', 'Inbox', 'claimed', 'c', now() + interval '1 hour')
            """)
    }

    @Test func twoHostsDecidingAtOnceLaunchOnTheLeastBusyOnceAndForgetItWhenItSubscribes() async throws {
        try await withFleet { fleet in
            try await seedLaunchFleet(fleet)
            let b = try fleet.queue(host: "b")
            let c = try fleet.queue(host: "c")
            #expect(try await b.owedUnsubscribed(among: [Self.launched, "com.example.idle"]) == [Self.launched])
            // Both decide at once, each as soon as it can: b is chosen and recorded, c stands aside.
            async let fromB = b.launchDecision(for: Self.launched)
            async let fromC = c.launchDecision(for: Self.launched)
            let decisions = try await [fromB, fromC]
            #expect(decisions.allSatisfy { $0 == .launch(on: "b") || $0 == .launching(on: "b") }, "\(decisions)")
            #expect(try await fleet.sql("SELECT handler || ' ' || host FROM launches") == "\(Self.launched) b")
            // Each delivery that waited for it has, in its history, the host that launched its
            // handler: once, by b alone; the other handler's deliveries have nothing of it.
            let launchedEvents = "SELECT string_agg(delivery_id::text || ' ' || host || ' ' || (detail->>'handler'), ',' ORDER BY delivery_id) FROM history_events WHERE event = 'launched'"
            #expect(try await fleet.sql(launchedEvents)
                    == "00000000-0000-0000-0000-0000000000d1 b \(Self.launched),00000000-0000-0000-0000-0000000000d2 b \(Self.launched)")
            // c now has fewer claims than b, but b's launch may still subscribe: c launches nothing.
            try await fleet.sql("UPDATE deliveries SET claimed_by = 'b' WHERE claimed_by = 'c'")
            #expect(try await c.launchDecision(for: Self.launched) == .launching(on: "b"))
            // Subscribed on b: not owed to a handler connected nowhere, and the launch is forgotten.
            try await b.publishSubscribed([Self.launched])
            #expect(try await c.owedUnsubscribed(among: [Self.launched]) == [])
            #expect(try await fleet.sql("SELECT count(*) FROM launches") == "0")
            #expect(try await c.launchDecision(for: Self.launched) == .subscribed(on: "b"))
            // b gone (its heartbeat older than its lease): c launches it.
            try await fleet.sql("UPDATE hosts SET last_heartbeat = now() - interval '1 hour' WHERE name = 'b'")
            #expect(try await c.owedUnsubscribed(among: [Self.launched]) == [Self.launched])
            #expect(try await c.launchDecision(for: Self.launched) == .launch(on: "c"))
            #expect(try await fleet.sql("SELECT count(*) FROM history_events WHERE event = 'launched' AND host = 'c'") == "2")
            let history = try await c.history(FleetHistoryQuery(deliveryID: UUID(uuidString: "00000000-0000-0000-0000-0000000000d1")))
            #expect(history.first?.events.filter { $0.event == "launched" }.map(\.host) == ["b", "c"])
            for queue in [b, c] { await queue.close() }
        }
    }

    @Test func aHandlerOnlyADeadHostCanLaunchIsDecidedNowhereAndRecordsNothing() async throws {
        try await withFleet { fleet in
            try await seedLaunchFleet(fleet)
            try await fleet.sql("UPDATE hosts SET last_heartbeat = now() - interval '1 hour' WHERE name IN ('b', 'c')")
            let a = try fleet.queue(host: "a")
            #expect(try await a.launchDecision(for: Self.launched) == .nowhere(launchableOn: ["b", "c"]))
            #expect(try await fleet.sql("SELECT count(*) FROM launches") == "0")
            #expect(try await fleet.sql("SELECT count(*) FROM history_events") == "0")
            await a.close()
        }
    }
}
