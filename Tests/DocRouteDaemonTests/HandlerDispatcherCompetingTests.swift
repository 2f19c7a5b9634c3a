import DocRouteProtocol
import DocRouteTestSupport
import Foundation
import Testing
@testable import DocRouteServer

/// Competing connections of one handler (`subscribe` with `"compete":true`, docs/PROTOCOL.md's
/// proposal): each delivery goes to one of them at a time, a slow one holds back only itself, and
/// what one leaves unacknowledged goes to the others under the same delivery ids. The ledger is
/// the real one, each connection one end of a socket pair.
@Suite struct HandlerDispatcherCompetingTests {
    typealias Setup = HandlerDispatcherTests.Setup
    static let todolist = HandlerDispatcherTests.todolist

    /// Records `count` owed URLs and returns their delivery ids in commit order.
    static func record(_ count: Int, in setup: Setup) async throws -> [String] {
        var ids: [String] = []
        for index in 1...count { ids.append(try await setup.record("todolist://item\(index)")) }
        return ids
    }

    /// The delivery ids among `messages`.
    static func deliveryIDs(_ messages: [[String: Any]]) -> [String] {
        messages.compactMap { $0["deliveryID"] as? String }
    }

    @Test func competingConnectionsShareTheDeliveriesEachGoingOutOnce() async throws {
        try await Setup.with { setup in
            let ids = try await Self.record(6, in: setup)
            let dispatcher = HandlerDispatcher(store: setup.backend, window: 2, logger: Fixtures.logger)
            let (first, firstEnd) = try setup.connect()
            defer { firstEnd.close() }
            let (second, secondEnd) = try setup.connect()
            defer { secondEnd.close() }
            firstEnd.setTimeout(0.5)
            secondEnd.setTimeout(0.5)

            #expect(await dispatcher.subscribe(setup.handler, connection: first, requestID: "1", compete: true) == nil)
            let firstMessages = await firstEnd.nextMessages()
            #expect(firstMessages.map { $0["type"] as? String } == ["subscribed", "launch", "openURL"], "\(firstMessages)")
            #expect(firstMessages.first?["pending"] as? Int == 6)
            #expect(Self.deliveryIDs(firstMessages) == Array(ids[0..<2]))

            // The second connection: its own launch, with the oldest delivery nobody holds.
            #expect(await dispatcher.subscribe(setup.handler, connection: second, requestID: "2", compete: true) == nil)
            let secondMessages = await secondEnd.nextMessages()
            #expect(secondMessages.map { $0["type"] as? String } == ["subscribed", "launch", "openURL"], "\(secondMessages)")
            #expect(secondMessages.first?["pending"] as? Int == 4, "owed and not in flight with the other connection")
            #expect(Self.deliveryIDs(secondMessages) == Array(ids[2..<4]))
            #expect(await dispatcher.instanceCount(Self.todolist) == 2)
            #expect(await dispatcher.inFlightCount(Self.todolist) == 4)

            // Room on one connection sends the next owed there, and only there.
            #expect(await dispatcher.acknowledge(deliveryID: ids[2], handled: true, connection: second, requestID: nil) == nil)
            #expect(Self.deliveryIDs(await secondEnd.nextMessages()) == [ids[4]])
            #expect(await dispatcher.acknowledge(deliveryID: ids[0], handled: true, connection: first, requestID: nil) == nil)
            #expect(Self.deliveryIDs(await firstEnd.nextMessages()) == [ids[5]])
            #expect(Self.deliveryIDs(await secondEnd.nextMessages()).isEmpty, "nothing went out twice")

            // One connection may not acknowledge what the other was sent.
            let foreign = await dispatcher.acknowledge(deliveryID: ids[3], handled: true, connection: first, requestID: "9")
            #expect(foreign?.code == .notFound)
            for (id, connection) in [(ids[1], first), (ids[5], first), (ids[3], second), (ids[4], second)] {
                #expect(await dispatcher.acknowledge(deliveryID: id, handled: true, connection: connection, requestID: nil) == nil)
            }
            await dispatcher.acknowledgementsWritten()
            #expect(try await setup.backend.owedCount(bundleIdentifier: Self.todolist) == 0)
            await dispatcher.disconnected(first)
            await dispatcher.disconnected(second)
            #expect(await !dispatcher.isSubscribed(Self.todolist))
        }
    }

    @Test func aSlowCompetingConnectionHoldsBackOnlyItself() async throws {
        try await Setup.with { setup in
            let ids = try await Self.record(10, in: setup)
            let dispatcher = HandlerDispatcher(store: setup.backend, window: 2, logger: Fixtures.logger)
            let (slow, slowEnd) = try setup.connect()
            defer { slowEnd.close() }
            let (quick, quickEnd) = try setup.connect()
            defer { quickEnd.close() }
            slowEnd.setTimeout(0.5)
            quickEnd.setTimeout(0.5)
            #expect(await dispatcher.subscribe(setup.handler, connection: slow, requestID: nil, compete: true) == nil)
            #expect(Self.deliveryIDs(await slowEnd.nextMessages()) == Array(ids[0..<2]))
            #expect(await dispatcher.subscribe(setup.handler, connection: quick, requestID: nil, compete: true) == nil)

            // The quick one acknowledges each at once and gets everything the slow one does not hold.
            var received: [String] = []
            while received.count < 8 {
                let batch = Self.deliveryIDs(await quickEnd.nextMessages())
                if batch.isEmpty { break }
                received += batch
                for id in batch {
                    #expect(await dispatcher.acknowledge(deliveryID: id, handled: true, connection: quick, requestID: nil) == nil)
                }
            }
            #expect(received == Array(ids[2..<10]))
            #expect(Self.deliveryIDs(await slowEnd.nextMessages()).isEmpty, "the slow one's window is still full")
            await dispatcher.acknowledgementsWritten()
            #expect(try await setup.backend.owedCount(bundleIdentifier: Self.todolist) == 2)
            await dispatcher.disconnected(slow)
            await dispatcher.disconnected(quick)
        }
    }

    @Test func whatACompetingConnectionLeavesGoesToTheOthersUnderTheSameIDs() async throws {
        try await Setup.with { setup in
            let ids = try await Self.record(4, in: setup)
            let dispatcher = HandlerDispatcher(store: setup.backend, window: 4, logger: Fixtures.logger)
            let (leaving, leavingEnd) = try setup.connect()
            let (staying, stayingEnd) = try setup.connect()
            defer { stayingEnd.close() }
            leavingEnd.setTimeout(0.5)
            stayingEnd.setTimeout(0.5)
            #expect(await dispatcher.subscribe(setup.handler, connection: leaving, requestID: nil, compete: true) == nil)
            #expect(Self.deliveryIDs(await leavingEnd.nextMessages()) == ids)
            // It acknowledges one, then goes away holding three.
            #expect(await dispatcher.acknowledge(deliveryID: ids[1], handled: true, connection: leaving, requestID: nil) == nil)

            #expect(await dispatcher.subscribe(setup.handler, connection: staying, requestID: nil, compete: true) == nil)
            let joined = await stayingEnd.nextMessages()
            #expect(joined.map { $0["type"] as? String } == ["subscribed", "launch"], "\(joined)")
            #expect(joined.last?["deliveryID"] == nil, "everything owed is in flight elsewhere: a plain launch")

            await dispatcher.disconnected(leaving)
            leavingEnd.close()
            let returned = await stayingEnd.nextMessages()
            #expect(returned.map { $0["type"] as? String } == ["openURL", "openURL", "openURL"], "\(returned)")
            #expect(Self.deliveryIDs(returned) == [ids[0], ids[2], ids[3]], "the same ids, in commit order, the acknowledged one not again")
            for id in Self.deliveryIDs(returned) {
                #expect(await dispatcher.acknowledge(deliveryID: id, handled: true, connection: staying, requestID: nil) == nil)
            }
            // A document committed afterwards goes out at once.
            let later = try await setup.record("todolist://later")
            await dispatcher.committed(bundleIdentifier: Self.todolist)
            #expect(Self.deliveryIDs(await stayingEnd.nextMessages()) == [later])
            await dispatcher.disconnected(staying)
        }
    }

    @Test func competingAndSingleConnectionsDoNotMix() async throws {
        try await Setup.with { setup in
            let dispatcher = HandlerDispatcher(store: setup.backend, window: 4, logger: Fixtures.logger)
            let (single, singleEnd) = try setup.connect()
            defer { singleEnd.close() }
            let (competing, competingEnd) = try setup.connect()
            defer { competingEnd.close() }
            #expect(await dispatcher.subscribe(setup.handler, connection: single, requestID: nil) == nil)
            let refused = await dispatcher.subscribe(setup.handler, connection: competing, requestID: "2", compete: true)
            #expect(refused?.code == .alreadySubscribed)
            #expect(refused?.message.contains("close it first (it did not ask to compete)") == true, "\(String(describing: refused))")
            await dispatcher.disconnected(single)

            #expect(await dispatcher.subscribe(setup.handler, connection: competing, requestID: nil, compete: true) == nil)
            let (late, lateEnd) = try setup.connect()
            defer { lateEnd.close() }
            let alone = await dispatcher.subscribe(setup.handler, connection: late, requestID: "3")
            #expect(alone?.code == .alreadySubscribed)
            #expect(alone?.message.contains(#"subscribe with "compete":true to join them"#) == true, "\(String(describing: alone))")
            await dispatcher.disconnected(competing)
        }
    }
}
