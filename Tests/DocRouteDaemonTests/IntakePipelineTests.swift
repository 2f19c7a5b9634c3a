import DocRouteHandlers
@testable import DocRouteLedger
import DocRouteTestSupport
import DocRouteTypes
import Foundation
import NIOPosix
import Synchronization
import Testing
@testable import DocRouteConfiguration
@testable import DocRouteDaemon
@testable import DocRouteDelivery
@testable import DocRouteIntake
@testable import DocRouteOperations
@testable import DocRouteServer

#if canImport(Glibc)
import Glibc
#endif

/// The intake with the real parts behind it (inotify, the type engine with the sample handlers, the
/// ledger, the sandbox, the quarantine) on a temporary state directory: what a user dropping
/// files sees, without the socket server or a daemon process.
@Suite struct IntakePipelineTests {
    static let molecules = "com.sunsetlakesoftware.molecules"

    /// A running intake on one drop inbox, wired as RoutingDaemon wires it.
    final class Intake: Sendable {
        let folder: TemporaryFolder
        let configuration: DaemonConfiguration
        let backend: LedgerBackend
        let dispatcher: HandlerDispatcher
        let watcher: InboxWatcher
        let intake: IntakePipeline
        let routing: RoutingSnapshot
        /// What intake reported to the daemon's activity (which it still reaches).
        let observed: ObservedIntake
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let runner: Task<Void, Never>

        /// Runs `body` with a started intake and stops it afterwards, whatever `body` does.
        /// `beforeStart` sees the folder once the configuration's folders exist, before the watch and scan.
        static func with(beforeStart: (TemporaryFolder) throws -> Void = { _ in }, _ body: (Intake) async throws -> Void) async throws {
            try await withTearDown(try await Intake(beforeStart: beforeStart), { await $0.stop() }, body)
        }

        init(beforeStart: (TemporaryFolder) throws -> Void) async throws {
            folder = try TemporaryFolder("intake")
            configuration = try Fixtures.daemonConfiguration(in: folder)
            try beforeStart(folder)
            try Fixtures.copySampleHandlers(to: configuration.handlersDirectory)
            let registry = HandlerDirectory(path: configuration.handlersDirectory).load(logger: Fixtures.logger)
            let defaults = AdminDefaults()
            let mime = MIMEDatabaseChoice(environment: ProcessInfo.processInfo.environment).database
            let routing = RoutingSnapshot(registry: registry, defaults: defaults, mimeDatabase: mime,
                                          containersDirectory: configuration.containersDirectory)
            self.routing = routing
            backend = try await runBlocking { [configuration] in try LedgerBackend(configuration: configuration, logger: Fixtures.logger) }
            try await backend.recover()
            let activity = DaemonActivity(configuration: configuration, logger: Fixtures.logger)
            dispatcher = HandlerDispatcher(store: backend, window: 64, activity: activity, logger: Fixtures.logger)
            watcher = try InboxWatcher(logger: Fixtures.logger)
            try await watcher.start(on: group)
            observed = ObservedIntake(forwardingTo: activity)
            let intake = IntakePipeline(configuration: configuration, backend: backend, watcher: watcher, activity: observed, logger: Fixtures.logger)
            self.intake = intake
            await intake.start(routing: { routing }, committed: { [dispatcher] bundle in await dispatcher.committed(bundleIdentifier: bundle) })
            runner = Task { await intake.run() }
        }

        /// Writes `bytes` beside the inbox, then renames the file in, as a careful sender does.
        func drop(_ name: String, _ bytes: [UInt8]) throws {
            try folder.write(".sending-" + name, bytes)
            try #require(rename(folder.string(".sending-" + name), folder.string("drop/" + name)) == 0)
        }

        func sandbox(_ bundle: String, _ name: String) -> String {
            configuration.containersDirectory + "/" + bundle + "/Documents/Inbox/Inbox/" + name
        }

        /// Waits up to 15 s for `path` to exist (copies are renamed into place, so existing means complete).
        func waitFor(_ path: String) async -> Bool {
            let deadline = ContinuousClock.now + .seconds(15)
            while ContinuousClock.now < deadline {
                if FileManager.default.fileExists(atPath: path) { return true }
                try? await Task.sleep(for: .milliseconds(20))
            }
            return FileManager.default.fileExists(atPath: path)
        }

        func stop() async {
            await dispatcher.acknowledgementsWritten()
            await backend.settle()
            await intake.stop()
            await runner.value
            await watcher.stop()
            try? await group.shutdownGracefully()
            let (backend, folder) = (self.backend, self.folder)
            _ = try? await runBlocking { backend.close(); folder.remove() }
        }
    }

    @Test func aFileRenamedIntoTheInboxEndsUpInItsHandlersSandbox() async throws {
        try await Intake.with { intake in
            let pdb = try #require(FileManager.default.contents(atPath: Fixtures.samplesFolder + "/1abc.pdb").map { Array($0) })
            try intake.drop("1abc.pdb", pdb)
            let copy = intake.sandbox(Self.molecules, "1abc.pdb")
            let arrived = await intake.waitFor(copy)
            let bytes = FileManager.default.contents(atPath: copy).map { Array($0) }
            await intake.backend.settle()
            let owed = try await intake.backend.owed(bundleIdentifier: Self.molecules, afterSequence: 0, limit: 10)
            let inbox = intake.folder.list("drop")

            #expect(arrived, "no copy at \(copy)")
            #expect(bytes == pdb, "the sandbox holds the bytes dropped")
            #expect(inbox.isEmpty, "the inbox is empty once the copy is committed: \(inbox)")
            #expect(owed.count == 1)
            #expect(owed.first?.event.urlString == "file://" + copy)
            #expect(owed.first?.event.contentType == "com.sunsetlakesoftware.molecules.pdb")
            #expect(owed.first?.event.sourceApplication == "org.docroute.drop")
        }
    }

    @Test func aSubscribedHandlerIsToldOfTheFileOnItsSocket() async throws {
        try await Intake.with { intake in
            let handler = try #require(intake.routing.registry.handler(for: Self.molecules))
            let (connection, client) = try ClientConnection.socketPair(id: 1, timeout: 15)
            defer { client.close() }
            #expect(await intake.dispatcher.subscribe(handler, connection: connection, requestID: "1") == nil)
            let greeting = [await client.nextMessage(), await client.nextMessage()].map { $0?["type"] as? String }

            try intake.drop("1abc.pdb", Fixtures.content(7, size: 5120))
            let event = await client.nextMessage()
            await intake.dispatcher.disconnected(connection)

            #expect(greeting == ["subscribed", "launch"], "nothing was owed: a plain launch")
            #expect(event?["type"] as? String == "openURL", "\(String(describing: event))")
            #expect(event?["url"] as? String == "file://" + intake.sandbox(Self.molecules, "1abc.pdb"))
            #expect(event?["mailbox"] as? String == "Inbox")
            let annotation = event?["annotation"] as? [String: Any]
            #expect(annotation?["originalFilename"] as? String == "1abc.pdb")
            #expect(annotation?["size"] as? Int == 5120)
        }
    }

    /// "I dropped it: where is it now?" The ledger answers with the file's story, as intake, the
    /// delivery and the dispatcher wrote it; and a file no handler claims has one too.
    @Test func aDroppedFileHasItsStoryInTheLedger() async throws {
        try await Intake.with { intake in
            let handler = try #require(intake.routing.registry.handler(for: Self.molecules))
            let (connection, client) = try ClientConnection.socketPair(id: 1, timeout: 15)
            defer { client.close() }
            #expect(await intake.dispatcher.subscribe(handler, connection: connection, requestID: "1") == nil)
            _ = [await client.nextMessage(), await client.nextMessage()]
            try intake.drop("1abc.pdb", Fixtures.content(7, size: 5120))
            let event = try #require(await client.nextMessage())
            let deliveryID = try #require(event["deliveryID"] as? String)
            #expect(await intake.dispatcher.acknowledge(deliveryID: deliveryID, handled: true, connection: connection, requestID: nil) == nil)
            try intake.drop("blob.qqq", [0x00, 0x01, 0x62, 0x69, 0x6E, 0x61, 0x72, 0x79])
            #expect(await intake.waitFor(intake.configuration.quarantineDirectory + "/Inbox/blob.qqq.reason"))
            await intake.dispatcher.acknowledgementsWritten()
            await intake.backend.settle()

            let found = try await intake.backend.history(HistoryQuery(name: "1abc.pdb"))
            let story = try #require(found.first)
            #expect(found.count == 1 && story.deliveryID?.protocolText == deliveryID)
            #expect(story.state == .acknowledged)
            #expect(Array(story.events.map(\.kind).prefix(6)) == [.seen, .typed, .routed, .committed, .notified, .acknowledged])
            func detail(_ kind: DocumentHistory.Event.Kind, _ name: String) -> String? {
                story.events.first { $0.kind == kind }?.details.first { $0.name == name }?.value
            }
            #expect(detail(.seen, "inbox") == intake.folder.string("drop"))
            #expect(detail(.seen, "size") == "5120")
            #expect(detail(.typed, "type") == "com.sunsetlakesoftware.molecules.pdb")
            #expect(detail(.typed, "by") == "extension")
            #expect(detail(.routed, "handler") == Self.molecules)
            #expect(detail(.routed, "why") == "rank Owner", "the text viewer claims .pdb too, as Alternate")
            #expect(detail(.committed, "path") == intake.sandbox(Self.molecules, "1abc.pdb"))
            #expect(detail(.notified, "by") == "openURL")
            #expect(detail(.notified, "to")?.hasPrefix("connection 1 (pid ") == true, "\(String(describing: detail(.notified, "to")))")
            #expect(try await intake.backend.history(HistoryQuery(bundleIdentifier: Self.molecules)).count == 1)

            let quarantined = try #require(try await intake.backend.history(HistoryQuery(name: "blob.qqq")).first)
            #expect(quarantined.state == .quarantined)
            #expect(quarantined.reason?.contains("no handler claims dyn.") == true, "\(String(describing: quarantined.reason))")
            #expect(quarantined.sourcePath == intake.folder.string("drop") + "/blob.qqq")
            await intake.dispatcher.disconnected(connection)
        }
    }

    @Test func aFileNoHandlerClaimsIsQuarantinedWithAReasonThatSaysWhatToDo() async throws {
        try await Intake.with { intake in
            try intake.drop("blob.qqq", [0x00, 0x01, 0x62, 0x69, 0x6E, 0x61, 0x72, 0x79])
            let reasonPath = intake.configuration.quarantineDirectory + "/Inbox/blob.qqq.reason"
            let quarantined = await intake.waitFor(reasonPath)
            let reason = (try? String(contentsOfFile: reasonPath, encoding: .utf8)) ?? ""
            let held = FileManager.default.contents(atPath: intake.configuration.quarantineDirectory + "/Inbox/blob.qqq").map { Array($0) }
            let inbox = intake.folder.list("drop")
            let sandboxes = intake.folder.allFiles("state/containers")

            #expect(quarantined, "no \(reasonPath)")
            #expect(held == [0x00, 0x01, 0x62, 0x69, 0x6E, 0x61, 0x72, 0x79], "the quarantine keeps the file as it came")
            #expect(reason.contains("no handler claims dyn."), "\(reason)")
            #expect(reason.contains("install a handler whose Info.plist claims it"), "\(reason)")
            #expect(reason.contains("docroutectl quarantine release"), "\(reason)")
            #expect(inbox.isEmpty, "\(inbox)")
            #expect(sandboxes.isEmpty, "nothing was delivered: \(sandboxes)")
        }
    }

    /// Records the names intake queued, and passes every report on to the daemon's activity.
    final class ObservedIntake: IntakeObserver {
        let activity: DaemonActivity
        let queuedNames = Mutex<[String]>([])

        init(forwardingTo activity: DaemonActivity) { self.activity = activity }

        func queued(_ arrival: ArrivalQueue.Arrival) {
            queuedNames.withLock { $0.append(String(decoding: arrival.name, as: UTF8.self)) }
            activity.queued(arrival)
        }
        func settled(_ arrivals: [ArrivalQueue.Arrival]) { activity.settled(arrivals) }
        func rescanned(_ reason: RescanReason) { activity.rescanned(reason) }
        func delivered(_ deliveries: [DocumentDelivery], _ outcomes: [DocumentDeliveryOutcome], arrivals: [ArrivalQueue.Arrival]) {
            activity.delivered(deliveries, outcomes, arrivals: arrivals)
        }
        func packageDelivered(_ bundleIdentifier: String, _ outcome: DocumentDeliveryOutcome, arrival: ArrivalQueue.Arrival) {
            activity.packageDelivered(bundleIdentifier, outcome, arrival: arrival)
        }
        func quarantined(inbox: Int, reason: String, arrival: ArrivalQueue.Arrival?) {
            activity.quarantined(inbox: inbox, reason: reason, arrival: arrival)
        }
        func unreadableMessage(inbox: Int) { activity.unreadableMessage(inbox: inbox) }
        func foldersWatched(inbox: Int, count: Int, notServed: Int) { activity.foldersWatched(inbox: inbox, count: count, notServed: notServed) }
    }

    // A sender that writes under a temporary name inside the inbox (`.incoming-…`, `….part`)
    // closes that name after writing: it is not a document, so it is never queued, counted as
    // waiting, or part of the progress total. Under load, such names once pushed the progress
    // total past the number of files dropped.
    @Test func aSendersTemporaryNamesAreNeverQueued() async throws {
        try await Intake.with { intake in
            let pdb = Fixtures.content(5, size: 1024)
            // Written first: inotify reports in order, so by the time 5abc.pdb is delivered every
            // one of these names has been seen.
            try intake.folder.write("drop/still-writing.pdb.part", pdb)
            try intake.folder.write("drop/editor-backup.pdb~", pdb)
            try intake.folder.write("drop/.incoming-5abc", pdb)
            try #require(rename(intake.folder.string("drop/.incoming-5abc"), intake.folder.string("drop/5abc.pdb")) == 0)
            let arrived = await intake.waitFor(intake.sandbox(Self.molecules, "5abc.pdb"))
            await intake.backend.settle()
            let queued = intake.observed.queuedNames.withLock { $0 }
            let inbox = intake.folder.list("drop").sorted()

            #expect(arrived, "5abc.pdb was not delivered")
            #expect(queued == ["5abc.pdb"], "only the renamed document is queued: \(queued)")
            #expect(inbox == ["editor-backup.pdb~", "still-writing.pdb.part"], "names still being written stay in the inbox: \(inbox)")
        }
    }

    @Test func aFileWaitingBeforeTheStartIsFoundByTheFirstScan() async throws {
        let early = Fixtures.content(3, size: 2048)
        // Dropped while the daemon was down: no inotify event will ever name it.
        try await Intake.with(beforeStart: { folder in try folder.write("drop/early.pdb", early) }) { intake in
            let copy = intake.sandbox(Self.molecules, "early.pdb")
            let arrived = await intake.waitFor(copy)
            #expect(arrived, "the start-up scan did not deliver early.pdb")
            #expect(FileManager.default.contents(atPath: copy).map { Array($0) } == early)
        }
    }
}
