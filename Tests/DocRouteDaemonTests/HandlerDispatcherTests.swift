import DocRouteHandlers
import DocRouteProtocol
import DocRouteTestSupport
import Foundation
import Synchronization
import Testing
@testable import DocRouteDelivery
@testable import DocRouteServer

#if canImport(Glibc)
import Glibc
#endif

/// What a subscribed handler reads on its socket (PROTOCOL.md, "Daemon to a subscribed handler"
/// and "Delivery guarantees"): `subscribed`, one `launch` carrying the oldest owed delivery, the
/// rest as `openURL`; everything unacknowledged again on the next subscription, nothing after
/// its acknowledgement. The ledger is the real one, the connection one end of a socket pair.
@Suite struct HandlerDispatcherTests {
    static let todolist = "com.acme.todolist"

    /// A state directory with the real ledger behind it, and the sample handlers' registry.
    final class Setup: Sendable {
        let folder: TemporaryFolder
        let backend: LedgerBackend
        let handler: RegisteredHandler
        let nextConnectionID = Mutex<UInt64>(1)

        init() async throws {
            folder = try TemporaryFolder("dispatch")
            let configuration = try Fixtures.daemonConfiguration(in: folder)
            try Fixtures.copySampleHandlers(to: configuration.handlersDirectory)
            let registry = HandlerDirectory(path: configuration.handlersDirectory).load(logger: Fixtures.logger)
            handler = try #require(registry.handler(for: HandlerDispatcherTests.todolist))
            backend = try await runBlocking { [configuration] in try LedgerBackend(configuration: configuration, logger: Fixtures.logger) }
            try await backend.recover()
        }

        /// Runs `body` with a new set-up and closes it afterwards, whatever `body` does.
        static func with(_ body: (Setup) async throws -> Void) async throws {
            try await withTearDown(try await Setup(), { await $0.close() }, body)
        }

        /// Commits a custom-scheme URL for the to-do list, as `docroutectl open todolist://…` does.
        @discardableResult
        func record(_ url: String) async throws -> String {
            try await backend.recordURL(url, bundleIdentifier: HandlerDispatcherTests.todolist, sourceApplication: "com.example.sender").deliveryID
        }

        /// A connection as the server makes it, and the handler's end of it.
        func connect() throws -> (connection: ClientConnection, handler: LineClient) {
            let id = nextConnectionID.withLock { id in
                defer { id += 1 }
                return id
            }
            let (connection, peer) = try ClientConnection.socketPair(id: id)
            return (connection, peer)
        }

        /// Closes the ledger (a checkpoint: flushes) and removes the folder, off the cooperative pool.
        func close() async {
            let (backend, folder) = (self.backend, self.folder)
            _ = try? await runBlocking {
                backend.close()
                folder.remove()
            }
        }
    }

    /// The launch options' URL of a `launch`, or an `openURL`'s `url`.
    static func url(_ message: [String: Any]?) -> String? {
        (message?["launchOptions"] as? [String: Any])?["UIApplicationLaunchOptionsURLKey"] as? String ?? message?["url"] as? String
    }

    @Test func aSubscriberGetsTheOldestOwedAsLaunchAndTheRestAsOpenURL() async throws {
        try await Setup.with { setup in
            let first = try await setup.record("todolist://www.acme.com?Quarterly%20Report#200806231300")
            let second = try await setup.record("todolist://www.acme.com?Groceries")
            let dispatcher = HandlerDispatcher(store: setup.backend, window: 64, logger: Fixtures.logger)
            let (connection, handler) = try setup.connect()
            defer { handler.close() }

            #expect(await dispatcher.subscribe(setup.handler, connection: connection, requestID: "1") == nil)
            let subscribed = try #require(await handler.nextMessage())
            #expect(subscribed["type"] as? String == "subscribed")
            #expect(subscribed["id"] as? String == "1")
            #expect(subscribed["bundleIdentifier"] as? String == Self.todolist)
            #expect(subscribed["pending"] as? Int == 2)
            let launch = try #require(await handler.nextMessage())
            #expect(launch["type"] as? String == "launch")
            #expect(launch["deliveryID"] as? String == first)
            #expect(Self.url(launch) == "todolist://www.acme.com?Quarterly%20Report#200806231300")
            #expect(launch["isFileURL"] as? Bool == false)
            let open = try #require(await handler.nextMessage())
            #expect(open["type"] as? String == "openURL")
            #expect(open["deliveryID"] as? String == second)
            #expect(Self.url(open) == "todolist://www.acme.com?Groceries")
            #expect(open["sourceApplication"] as? String == "com.example.sender")
            #expect(await dispatcher.inFlightCount(Self.todolist) == 2)
            await dispatcher.disconnected(connection)
        }
    }

    @Test func unacknowledgedDeliveriesComeAgainOnTheNextSubscriptionAndAcknowledgedOnesNever() async throws {
        try await Setup.with { setup in
            let first = try await setup.record("todolist://a")
            let second = try await setup.record("todolist://b")
            let dispatcher = HandlerDispatcher(store: setup.backend, window: 64, logger: Fixtures.logger)

            // First run of the handler: it reads both and goes away without acknowledging.
            let (once, onceHandler) = try setup.connect()
            #expect(await dispatcher.subscribe(setup.handler, connection: once, requestID: "1") == nil)
            #expect(await onceHandler.nextMessages(upTo: 3).compactMap { $0["deliveryID"] as? String } == [first, second])
            await dispatcher.disconnected(once)
            onceHandler.close()
            #expect(await !dispatcher.isSubscribed(Self.todolist))

            // Second run: the same two, the same ids, the oldest as launch again.
            let (again, againHandler) = try setup.connect()
            defer { againHandler.close() }
            #expect(await dispatcher.subscribe(setup.handler, connection: again, requestID: "2") == nil)
            let resent = await againHandler.nextMessages(upTo: 3)
            #expect(resent.map { $0["type"] as? String } == ["subscribed", "launch", "openURL"])
            #expect(resent.first?["pending"] as? Int == 2)
            #expect(resent.compactMap { $0["deliveryID"] as? String } == [first, second])

            // Acknowledged: no reply, and never sent again; a new commit goes out at once.
            #expect(await dispatcher.acknowledge(deliveryID: first, handled: true, connection: again, requestID: nil) == nil)
            #expect(await dispatcher.acknowledge(deliveryID: second, handled: false, connection: again, requestID: nil) == nil)
            await dispatcher.acknowledgementsWritten()
            #expect(try await setup.backend.owedCount(bundleIdentifier: Self.todolist) == 0)
            let third = try await setup.record("todolist://c")
            await dispatcher.committed(bundleIdentifier: Self.todolist)
            let live = try #require(await againHandler.nextMessage())
            #expect(live["type"] as? String == "openURL")
            #expect(live["deliveryID"] as? String == third)
            await dispatcher.disconnected(again)

            // Third run: only the unacknowledged third, as launch.
            let (later, laterHandler) = try setup.connect()
            defer { laterHandler.close() }
            #expect(await dispatcher.subscribe(setup.handler, connection: later, requestID: "3") == nil)
            laterHandler.setTimeout(0.5)
            let last = await laterHandler.nextMessages()
            #expect(last.map { $0["type"] as? String } == ["subscribed", "launch"], "\(last)")
            #expect(last.first?["pending"] as? Int == 1)
            #expect(last.last?["deliveryID"] as? String == third)
            #expect(await dispatcher.acknowledge(deliveryID: third, handled: true, connection: later, requestID: nil) == nil)
            await dispatcher.acknowledgementsWritten()
            await dispatcher.disconnected(later)

            // Nothing owed: a plain launch, with no delivery to acknowledge.
            let (idle, idleHandler) = try setup.connect()
            defer { idleHandler.close() }
            #expect(await dispatcher.subscribe(setup.handler, connection: idle, requestID: "4") == nil)
            idleHandler.setTimeout(0.5)
            let plain = await idleHandler.nextMessages()
            #expect(plain.map { $0["type"] as? String } == ["subscribed", "launch"], "\(plain)")
            #expect(plain.first?["pending"] as? Int == 0)
            #expect(plain.last?["deliveryID"] == nil)
            #expect((plain.last?["launchOptions"] as? [String: Any])?.isEmpty == true)
            await dispatcher.disconnected(idle)
        }
    }

    @Test func atMostTheWindowIsInFlightAndAnAcknowledgementMakesRoom() async throws {
        try await Setup.with { setup in
            var ids: [String] = []
            for index in 1...3 { ids.append(try await setup.record("todolist://\(index)")) }
            let dispatcher = HandlerDispatcher(store: setup.backend, window: 2, logger: Fixtures.logger)
            let (connection, handler) = try setup.connect()
            defer { handler.close() }
            #expect(await dispatcher.subscribe(setup.handler, connection: connection, requestID: nil) == nil)
            handler.setTimeout(0.5)
            #expect(await handler.nextMessages().compactMap { $0["deliveryID"] as? String } == Array(ids.prefix(2)), "two in flight, the third waits")
            #expect(await dispatcher.acknowledge(deliveryID: ids[0], handled: true, connection: connection, requestID: nil) == nil)
            #expect(await handler.nextMessages().compactMap { $0["deliveryID"] as? String } == [ids[2]])
            await dispatcher.disconnected(connection)
        }
    }

    @Test func anAcknowledgementOfWhatThisConnectionWasNotSentIsRefused() async throws {
        try await Setup.with { setup in
            let owed = try await setup.record("todolist://a")
            let dispatcher = HandlerDispatcher(store: setup.backend, window: 64, logger: Fixtures.logger)
            let (subscriber, handler) = try setup.connect()
            defer { handler.close() }
            let (other, otherEnd) = try setup.connect()
            defer { otherEnd.close() }
            #expect(await dispatcher.subscribe(setup.handler, connection: subscriber, requestID: nil) == nil)
            let error = await dispatcher.acknowledge(deliveryID: owed, handled: true, connection: other, requestID: "9")
            #expect(error?.code == .notFound)
            #expect(error?.message.contains("no delivery '\(owed)' is waiting for an acknowledgement on this connection") == true)
            let second = await dispatcher.subscribe(setup.handler, connection: other, requestID: "10")
            #expect(second?.code == .alreadySubscribed)
            #expect(second?.message.contains("close it first") == true)
            await dispatcher.acknowledgementsWritten()
            #expect(try await setup.backend.owedCount(bundleIdentifier: Self.todolist) == 1, "still owed")
            await dispatcher.disconnected(subscriber)
        }
    }

    @Test func aCommitForAHandlerNobodyIsSubscribedAsAsksForItsLaunch() async throws {
        try await Setup.with { setup in
            let launched = Mutex<[String]>([])
            let dispatcher = HandlerDispatcher(store: setup.backend, window: 64, logger: Fixtures.logger) { bundle in
                launched.withLock { $0.append(bundle) }
            }
            try await setup.record("todolist://a")
            await dispatcher.committed(bundleIdentifier: Self.todolist)
            #expect(launched.withLock { $0 } == [Self.todolist])
        }
    }
}
