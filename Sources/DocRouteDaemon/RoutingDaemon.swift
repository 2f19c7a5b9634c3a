import DocRouteConfiguration
import DocRouteDelivery
import DocRouteHandlers
import DocRouteIntake
import DocRouteOperations
import DocRoutePlatform
import DocRouteProtocol
import DocRouteServer
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
package final class RoutingDaemon: Sendable {

    package let configuration: DaemonConfiguration
    let logger: Logger
    let backend: LedgerBackend
    let notifier: SystemdNotifier?
    let group: MultiThreadedEventLoopGroup
    let mimeDatabase: MIMEDatabase
    /// Which MIME database, and why (``MIMEDatabaseChoice``).
    let mimeExplanation: String
    let routing: NIOLockedValueBox<RoutingSnapshot>
    let intake: IntakePipeline
    package let dispatcher: HandlerDispatcher
    let launcher: HandlerLauncher
    /// Counts for `status` and the metrics.
    package let activity: DaemonActivity
    let watcher: InboxWatcher
    /// Watches the handlers directory: a manifest added, changed, renamed or removed reloads.
    let manifestWatcher: InboxWatcher
    let server: NIOLockedValueBox<SocketServer?> = .init(nil)
    /// Where clients pass descriptors (`open-descriptor`); nil when it could not be set up.
    let descriptorServer: NIOLockedValueBox<DescriptorSocketServer?> = .init(nil)
    /// `admin_group`, resolved at start and on every reload.
    let administrators: NIOLockedValueBox<AdministratorGroup>
    /// The uids handlers run as (`DocRouteUser`), resolved at start and on every reload: they may
    /// use the connections kept for handlers.
    let handlerUIDs: NIOLockedValueBox<Set<UInt32>>
    static let version = "docrouted/0.1.0"

    package init(configuration: DaemonConfiguration, backend: LedgerBackend, notifier: SystemdNotifier?, logger: Logger) throws {
        self.configuration = configuration
        self.backend = backend
        self.notifier = notifier
        self.logger = logger
        self.group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let mime = MIMEDatabaseChoice(environment: ProcessInfo.processInfo.environment)
        self.mimeDatabase = mime.database
        self.mimeExplanation = mime.explanation
        // Content typing that differs from GIO's must not go unnoticed.
        if mime.isDegraded {
            logger.warning("MIME database: \(mime.explanation)")
        } else {
            logger.info("MIME database: \(mime.explanation)")
        }
        let registry = HandlerDirectory(path: configuration.handlersDirectory).load(logger: logger)
        let defaults = Self.loadDefaults(configuration, logger: logger)
        self.routing = NIOLockedValueBox(RoutingSnapshot(
            registry: registry, defaults: defaults, mimeDatabase: mimeDatabase, containersDirectory: configuration.containersDirectory))
        self.administrators = NIOLockedValueBox(AdministratorGroup.resolve(configuration.adminGroup, logger: logger))
        self.handlerUIDs = NIOLockedValueBox(Self.uids(of: registry))
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
    ///
    /// `descriptorEndpoint` is the descriptor socket (systemd's second socket); nil binds it
    /// beside the main socket (``DescriptorSocketServer/path(besides:)``).
    package func start(listeningOn endpoint: SocketServer.Endpoint, descriptorEndpoint: SocketServer.Endpoint? = nil) async throws {
        for (directory, key) in [(configuration.stateDirectory, "state_directory"), (configuration.containersDirectory, "containers_directory"),
                                 (configuration.quarantineDirectory, "quarantine_directory")] {
            if try DaemonFolder.create(directory, what: key) {
                logger.notice("created the \(key) \(directory)")
            }
        }
        try await backend.recover()
        activity.seed(await backend.ledgerStatistics())
        try await watcher.start(on: group)
        try await manifestWatcher.start(on: group)
        do {
            try manifestWatcher.watch(WatchedFolder(inbox: Self.handlersFolderTag, mailbox: nil, path: configuration.handlersDirectory))
        } catch {
            logger.warning("handler manifests will be reloaded on SIGHUP only: \(error)")
        }
        // `docroutectl default set` replaces defaults.json by a rename: the daemon takes it at once.
        do {
            try manifestWatcher.watch(WatchedFolder(inbox: Self.stateFolderTag, mailbox: nil, path: configuration.stateDirectory))
        } catch {
            logger.warning("the administrator's defaults will be reloaded on SIGHUP only: \(error)")
        }
        await intake.start(routing: { [routing] in routing.withLockedValue { $0 } },
                           committed: { [dispatcher] bundle in await dispatcher.committed(bundleIdentifier: bundle) })
        // The socket last: a client that can connect finds everything else in place.
        let server = SocketServer(group: group, responder: self, limits: ConnectionLimits(configuration),
                                  isHandlerUser: { [handlerUIDs] uid in handlerUIDs.withLockedValue { $0.contains(uid) } }, logger: logger)
        do {
            try await server.start(endpoint)
        } catch {
            let code = (error as? IOError)?.errnoCode ?? (error as? SocketServerError)?.errno
            let reason = code.map { String(cString: strerror($0)) } ?? "\(error)"
            throw DaemonFolder.Failure(path: configuration.socket, description: """
                cannot listen on the socket \(configuration.socket): \(reason) (docrouted runs as uid \(getuid())); \
                make its folder writable by docrouted's user, set another socket in the configuration, \
                or let systemd pass it (docroute.socket)
                """)
        }
        self.server.withLockedValue { $0 = server }
        startDescriptorServer(descriptorEndpoint)
        _ = try? notifier?.ready()
        await refreshStatus()
        let registry = routing.withLockedValue { $0.registry }
        logger.info("docrouted ready", metadata: [
            "socket": "\(configuration.socket)", "handlers": "\(registry.handlers.count)",
            "inboxes": "\(configuration.inboxes.map(\.path))", "mime-database": "\(mimeDatabase.source)",
        ])
    }

    /// The uids the registry's handlers run as (those that resolve).
    static func uids(of registry: HandlerRegistry) -> Set<UInt32> {
        Set(registry.handlers.compactMap { HandlerAccount.resolve($0.manifest.user)?.uid })
    }

    /// Reloads the handlers directory and the administrator's defaults (SIGHUP, or a change of
    /// either seen by the watcher; `reason` says which, for the log).
    package func reload(reason: String = "SIGHUP") async {
        _ = try? notifier?.reloading()
        let registry = HandlerDirectory(path: configuration.handlersDirectory).load(logger: logger)
        let defaults = Self.loadDefaults(configuration, logger: logger)
        let administrators = AdministratorGroup.resolve(configuration.adminGroup, logger: logger)
        self.administrators.withLockedValue { $0 = administrators }
        handlerUIDs.withLockedValue { $0 = Self.uids(of: registry) }
        routing.withLockedValue {
            $0 = RoutingSnapshot(registry: registry, defaults: defaults, mimeDatabase: mimeDatabase,
                                 containersDirectory: configuration.containersDirectory)
        }
        logger.info("handlers and defaults reloaded (\(reason))", metadata: [
            "handlers": "\(registry.handlers.count)", "failed": "\(registry.failures.count)", "warnings": "\(registry.warnings.count)",
            "defaults": "\(defaults.types.count + defaults.schemes.count)",
        ])
        _ = try? notifier?.ready()
        await refreshStatus()
    }

    /// Runs until cancelled: the intake loop, and the watchdog pings from the path that does the work.
    package func run() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.intake.run() }
            group.addTask { await self.reloadOnManifestChanges() }
            group.addTask { [backend, activity] in await backend.runReclamation { activity.sourcesToReclaim($0) } }
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
    package func shutdown() async {
        _ = try? notifier?.stopping()
        await server.withLockedValue { $0 }?.stop()
        descriptorServer.withLockedValue { $0 }?.stop()
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

    /// `WatchedFolder.inbox` of the handlers folder and of the state directory in `manifestWatcher`.
    static let handlersFolderTag = -1
    static let stateFolderTag = -2

    /// The administrator's defaults; none (and an error in the log) when the file cannot be read.
    static func loadDefaults(_ configuration: DaemonConfiguration, logger: Logger) -> AdminDefaults {
        do {
            return try AdminDefaultsStore(stateDirectory: configuration.stateDirectory).load()
        } catch {
            logger.error("the administrator's defaults are not applied: \(error)")
            return AdminDefaults()
        }
    }

    /// Reloads when a `.plist` in the handlers directory or `defaults.json` in the state
    /// directory changes. Changes arriving together (an editor's write-and-rename, a package
    /// installing several, a copy's create and close) cause one reload, 200 ms after the first.
    func reloadOnManifestChanges() async {
        // Each event bumps `requested`; the reloader sleeps 200 ms, then takes everything asked
        // for so far in one reload, so events seen meanwhile cost nothing more.
        let requested = NIOLockedValueBox<(count: Int, reasons: Set<String>)>((0, []))
        let (wakeups, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                var done = 0
                for await _ in wakeups {
                    try? await Task.sleep(for: .milliseconds(200))
                    let (count, reasons) = requested.withLockedValue { state in
                        defer { state.reasons = [] }
                        return state
                    }
                    guard count > done else { continue }
                    done = count
                    await self.reload(reason: reasons.sorted().joined(separator: ", "))
                }
            }
            for await event in manifestWatcher.events {
                guard let reason = Self.reloadReason(event) else { continue }
                requested.withLockedValue {
                    $0.count += 1
                    $0.reasons.insert(reason)
                }
                wake.yield()
            }
            wake.finish()
            await group.waitForAll()
        }
    }

    /// Why an event in the handlers folder or state directory asks for a reload; nil when it does
    /// not (a file still being written, the ledger, anything that is not a manifest).
    static func reloadReason(_ event: InboxWatcher.Event) -> String? {
        let folder: WatchedFolder
        let name: [UInt8]
        switch event {
        // A created file is still being written: its close or rename follows.
        case .created: return nil
        case .arrived(let where_, let entry), .removed(let where_, let entry), .folderAppeared(let where_, let entry, _):
            folder = where_
            name = entry
        case .folderGone(let where_):
            return where_.inbox == stateFolderTag ? nil : "handlers folder changed"
        case .overflow:
            return "watch overflow"
        }
        if folder.inbox == stateFolderTag {
            return name == Array(AdminDefaultsStore.fileName.utf8) ? "defaults changed" : nil
        }
        return name.count >= 6 && name.suffix(6) == Array(".plist".utf8) ? "handler manifest changed" : nil
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
