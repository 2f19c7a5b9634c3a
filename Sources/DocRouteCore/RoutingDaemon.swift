import DocRouteHandlers
import DocRouteProtocol
import DocRouteSystemd
import DocRouteTypes
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// docrouted's working core: watches the inboxes, types and routes each arrival, has it delivered
/// durably, and serves handlers on the socket.
///
/// States: `idle` → ``start()`` (recover the ledger, load handlers, listen, watch and scan; then
/// READY) → `running` → ``shutdown()`` (stop accepting, finish the batch in hand) → `stopped`.
public final class RoutingDaemon: Sendable {
    /// The handler registry and what depends on it, swapped whole on reload: a document already in
    /// intake finishes with the snapshot it started with.
    struct Routing: Sendable {
        var registry: HandlerRegistry
        var selector: HandlerSelector
        var engine: TypeEngine
    }

    public let configuration: DaemonConfiguration
    let logger: Logger
    let backend: any DeliveryBackend
    let notifier: SystemdNotifier?
    let group: MultiThreadedEventLoopGroup
    let mimeDatabase: MIMEDatabase
    let routing: NIOLockedValueBox<Routing>
    let intake: IntakePipeline
    public let dispatcher: HandlerDispatcher
    let launcher: HandlerLauncher
    /// Counts for `status` and the metrics.
    public let activity: DaemonActivity
    let watcher: InboxWatcher
    /// Watches the handlers directory: a manifest added, changed, renamed or removed reloads.
    let manifestWatcher: InboxWatcher
    let server: NIOLockedValueBox<SocketServer?> = .init(nil)
    static let version = "docrouted/0.1.0"

    public init(configuration: DaemonConfiguration, backend: any DeliveryBackend, notifier: SystemdNotifier?, logger: Logger) throws {
        self.configuration = configuration
        self.backend = backend
        self.notifier = notifier
        self.logger = logger
        self.group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        self.mimeDatabase = MIMEDatabase.loadSystemOrBuiltin()
        let registry = HandlerDirectory(path: configuration.handlersDirectory).load(logger: logger)
        let defaults = (try? AdminDefaultsStore(stateDirectory: configuration.stateDirectory).load()) ?? AdminDefaults()
        self.routing = NIOLockedValueBox(Routing(
            registry: registry, selector: HandlerSelector(registry: registry, defaults: defaults),
            engine: TypeEngine(catalog: registry.catalog, mimeDatabase: mimeDatabase)))
        let activity = DaemonActivity(configuration: configuration, logger: logger)
        self.activity = activity
        let launcher = HandlerLauncher(socketPath: configuration.socket, flagDirectory: configuration.launchFlagDirectory, activity: activity, logger: logger)
        self.launcher = launcher
        let routingBox = routing
        self.dispatcher = HandlerDispatcher(store: backend, window: configuration.maxUnacknowledged, activity: activity, logger: logger) { bundle in
            guard let handler = routingBox.withLockedValue({ $0.registry.handler(for: bundle) }) else { return }
            Task { await launcher.launchIfNeeded(handler) }
        }
        self.watcher = try InboxWatcher(logger: logger)
        self.manifestWatcher = try InboxWatcher(logger: logger, reportRemovals: true)
        self.intake = IntakePipeline(configuration: configuration, backend: backend, watcher: watcher, activity: activity, logger: logger)
    }

    /// Recovers, loads, listens, watches and scans; READY=1 goes out only after all of it.
    public func start(listeningOn endpoint: SocketServer.Endpoint) async throws {
        for directory in [configuration.stateDirectory, configuration.containersDirectory, configuration.quarantineDirectory] {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        try await backend.recover()
        activity.seed(await backend.ledgerStatistics())
        try await watcher.start(on: group)
        try await manifestWatcher.start(on: group)
        do {
            try manifestWatcher.watch(WatchedFolder(inbox: -1, mailbox: nil, path: configuration.handlersDirectory))
        } catch {
            logger.warning("handler manifests will be reloaded on SIGHUP only: \(error)")
        }
        await intake.start(routing: { [routing] in routing.withLockedValue { $0 } }, dispatcher: dispatcher)
        // The socket last: a client that can connect finds everything else in place.
        let server = SocketServer(group: group, responder: self, maxConnections: configuration.maxConnections, logger: logger)
        try await server.start(endpoint)
        self.server.withLockedValue { $0 = server }
        _ = try? notifier?.ready()
        await refreshStatus()
        let registry = routing.withLockedValue { $0.registry }
        logger.info("docrouted ready", metadata: [
            "socket": "\(configuration.socket)", "handlers": "\(registry.handlers.count)",
            "inboxes": "\(configuration.inboxes.map(\.path))", "mime-database": "\(mimeDatabase.source)",
        ])
    }

    /// Reloads the handlers directory and the administrator's defaults (SIGHUP).
    public func reload() async {
        _ = try? notifier?.reloading()
        let registry = HandlerDirectory(path: configuration.handlersDirectory).load(logger: logger)
        let defaults = (try? AdminDefaultsStore(stateDirectory: configuration.stateDirectory).load()) ?? AdminDefaults()
        routing.withLockedValue {
            $0 = Routing(registry: registry, selector: HandlerSelector(registry: registry, defaults: defaults),
                         engine: TypeEngine(catalog: registry.catalog, mimeDatabase: mimeDatabase))
        }
        logger.info("handlers reloaded", metadata: ["handlers": "\(registry.handlers.count)", "failed": "\(registry.failures.count)"])
        _ = try? notifier?.ready()
        await refreshStatus()
    }

    /// Runs until cancelled: the intake loop, and the watchdog pings from the path that does the work.
    public func run() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.intake.run() }
            group.addTask { await self.reloadOnManifestChanges() }
            if let interval = notifier?.watchdogInterval {
                group.addTask { await self.pingWatchdog(every: interval) }
            }
            if notifier?.isEnabled == true {
                group.addTask { await self.refreshStatusPeriodically() }
            }
            // The intake loop ends only on shutdown; the others follow it.
            await group.next()
            group.cancelAll()
        }
    }

    /// Stops accepting, lets the batch in hand finish, closes everything.
    public func shutdown() async {
        _ = try? notifier?.stopping()
        await server.withLockedValue { $0 }?.stop()
        await dispatcher.acknowledgementsWritten()
        // The last batch's source removals use the inbox folders that stop() closes.
        await backend.settle()
        await intake.stop()
        await watcher.stop()
        await manifestWatcher.stop()
        await launcher.terminateAll()
        await activity.flush()
        try? await group.shutdownGracefully()
    }

    /// Reloads when a `.plist` in the handlers directory changes. Changes arriving together (an
    /// editor's write-and-rename, a package installing several) cause one reload, 200 ms later.
    func reloadOnManifestChanges() async {
        // One reload per .plist event, 200 ms after it: simple, and reloads are cheap (~17 ms for 200).
        for await event in manifestWatcher.events {
            let name: [UInt8]
            switch event {
            case .arrived(_, let entry), .created(_, let entry), .removed(_, let entry): name = entry
            case .folderAppeared, .folderGone, .overflow: name = Array(".plist".utf8)
            }
            guard name.count >= 6, name.suffix(6) == Array(".plist".utf8) else { continue }
            try? await Task.sleep(for: .milliseconds(200))
            await reload()
        }
    }

    func pingWatchdog(every interval: Duration) async {
        let loop = group.next()
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            // Both the intake actor and the event loop must answer: a wedge in either stops the pings.
            await intake.heartbeat()
            _ = try? await loop.submit { [notifier] in _ = try? notifier?.watchdogPing() }.get()
        }
    }

    func refreshStatusPeriodically() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(5))
            await refreshStatus()
        }
    }

    func refreshStatus() async {
        guard let notifier, notifier.isEnabled else { return }
        let registry = routing.withLockedValue { $0.registry }
        var subscribed = 0
        var pending = 0
        for handler in registry.handlers {
            if await dispatcher.isSubscribed(handler.bundleIdentifier) { subscribed += 1 }
            pending += (try? await backend.owedCount(bundleIdentifier: handler.bundleIdentifier)) ?? 0
        }
        let delivered = await intake.deliveredCount
        _ = try? notifier.status("\(registry.handlers.count) handlers, \(subscribed) subscribed, \(pending) pending, \(delivered) delivered since start")
    }
}
