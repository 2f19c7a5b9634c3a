import DocRouteTestSupport
import Foundation
import Testing

/// Competing instances of one handler on one host, against a real docrouted over its socket
/// (`subscribe` with `"compete":true`): a burst is shared, a slow instance holds back only
/// itself, and what an instance that hangs holds goes to the others when its connection ends.
/// Checked with the history checker over everything dropped, announced and acknowledged.
@Suite struct CompetingInstancesIntegrationTests {
    static let molecules = DeliveryIntegrationTests.molecules

    /// The handler's entry of `status`, read over the socket as root.
    static func handlerStatus(_ harness: DaemonHarness) throws -> [String: Any]? {
        let client = try LineClient(path: harness.socket)
        defer { client.close() }
        try client.send(["type": "status", "id": "s"])
        let status = client.readMessage()
        let handlers = status?["handlers"] as? [[String: Any]] ?? []
        return handlers.first { $0["bundleIdentifier"] as? String == molecules }
    }

    @Test func competingInstancesShareABurstAndTakeOverWhatAHungOneHeld() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        // One instance that reads and never acknowledges (it hangs), one slow, one quick.
        let hung = HistoryHandler(socket: harness.socket, bundleIdentifier: Self.molecules, compete: true, acknowledges: false)
        let slow = HistoryHandler(socket: harness.socket, bundleIdentifier: Self.molecules, compete: true, pause: 0.05)
        let quick = HistoryHandler(socket: harness.socket, bundleIdentifier: Self.molecules, compete: true)
        for instance in [hung, slow, quick] {
            instance.start()
            #expect(harness.waitUntil { instance.subscriptionCount == 1 }, "\(harness.daemonLog.suffix(2000))")
        }
        defer { _ = slow.stop(); _ = quick.stop() }
        let status = try Self.handlerStatus(harness)
        #expect(status?["instances"] as? Int == 3, "\(String(describing: status))")
        let shown = try CtlProcess.run(["status", "--socket", harness.socket]).output
        #expect(shown.split(separator: "\n").contains { $0.hasPrefix(Self.molecules) && $0.contains("yes (3 competing)") }, "\(shown)")

        var documents: [String: [UInt8]] = [:]
        for index in 0..<60 {
            let name = "compete-\(index).pdb"
            documents[name] = FleetDeliveryIntegrationTests.document(index)
            try harness.drop(name, documents[name]!)
        }
        #expect(harness.waitForInboxDrained(timeout: 30))
        // Everything went out: what the hung instance holds, and the rest acknowledged by the others.
        let shared = harness.waitUntil(timeout: 30) {
            Set(hung.snapshot.announcements.map(\.deliveryID)).count + Set(slow.snapshot.acks).union(quick.snapshot.acks).count == 60
        }
        #expect(shared, "\(hung.snapshot.summary) / \(slow.snapshot.summary) / \(quick.snapshot.summary)")
        let held = Set(hung.snapshot.announcements.map(\.deliveryID))
        #expect(!held.isEmpty, "the hung instance was given some of the burst")
        #expect(!slow.snapshot.acks.isEmpty && !quick.snapshot.acks.isEmpty, "every instance took part")

        // The hung instance's connection ends: what it held goes to the others, same ids.
        let hungSeen = hung.stop()
        #expect(harness.waitUntil(timeout: 30) { Set(slow.snapshot.acks).union(quick.snapshot.acks).count == 60 },
                "\(slow.snapshot.summary) / \(quick.snapshot.summary)")
        let sandbox = harness.sandbox(Self.molecules)
        quick.noteEnd(sandbox: sandbox, inbox: harness.inbox, quarantine: harness.quarantine)
        let quickSeen = quick.stop()
        let slowSeen = slow.stop()
        #expect(held.isSubset(of: Set(quickSeen.acks).union(slowSeen.acks)))

        var history = DeliveryHistory()
        for (name, bytes) in documents { history.dropped(name, bytes: bytes) }
        for seen in [hungSeen, slowSeen, quickSeen] {
            for announcement in seen.announcements { history.announced(announcement) }
            for id in seen.acks { history.acknowledged(id) }
        }
        history.sandboxes[""] = quickSeen.sandbox
        history.leftInInbox = quickSeen.leftInInbox
        history.quarantined = quickSeen.quarantined
        let problems = history.violations()
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))\n\(history.summary)")
        #expect(quickSeen.sandbox.count == 60)
    }
}
