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
import NIOCore
import NIOPosix
import Synchronization
import SystemPackage

/// docrouted's working core: watches the inboxes, types and routes each arrival, has it delivered
/// durably, and serves handlers on the socket.
///
/// States: `initial` → ``start(listeningOn:descriptorEndpoint:)`` (recover the ledger, load
/// handlers, listen, watch and scan; then READY) → `running` → ``shutdown()`` (stop accepting,
/// finish the batch in hand) → `shuttingDown` → `finished`. The lifecycle calls are the actor's;
/// requests (``respond(to:from:)``) are answered concurrently, from the snapshots below.
package actor RoutingDaemon {
    /// Running, it holds its ``Servers``; shutting down, nothing: ``shutdown()`` has them in hand.
    typealias State = Lifecycle<Servers, Void>

    /// The sockets the daemon serves while running.
    struct Servers {
        var server: SocketServer
        /// Where clients pass descriptors (`open-descriptor`); nil when it could not be set up.
        var descriptorServer: DescriptorSocketServer?
    }

    /// The current ``RoutingSnapshot``, replaced whole on reload; shared with intake and the dispatcher.
    final class RoutingTable: Sendable {
        private let current: Mutex<RoutingSnapshot>

        init(_ routing: RoutingSnapshot) {
            current = Mutex(routing)
        }

        var snapshot: RoutingSnapshot { current.withLock { $0 } }

        func replace(with routing: RoutingSnapshot) {
            current.withLock { $0 = routing }
        }
    }

    /// The configuration of the moment: a reload (SIGHUP) takes the inboxes and the keys that
    /// change live from the file (``DaemonConfiguration/reloaded(from:)``).
    nonisolated let currentConfiguration: Mutex<DaemonConfiguration>
    package nonisolated var configuration: DaemonConfiguration { currentConfiguration.withLock { $0 } }
    /// Keys changed in the file that take effect only at the next start (for the log, `status`
    /// and `--check`).
    nonisolated let keysNeedingRestart = Mutex<[String]>([])
    nonisolated let logger: Logger
    nonisolated let backend: LedgerBackend
    /// With `[fleet]`: intake's backend commits inbox files to PostgreSQL, and the fleet's
    /// dispatcher claims deliveries for the handlers subscribed here; nil delivers locally only.
    nonisolated let fleet: FleetDelivery?
    nonisolated let notifier: SystemdNotifier?
    nonisolated let group: MultiThreadedEventLoopGroup
    nonisolated let mimeDatabase: MIMEDatabase
    /// Which MIME database, and why (``MIMEDatabaseChoice``).
    nonisolated let mimeExplanation: String
    nonisolated let routing: RoutingTable
    /// The handlers as loaded now (replaced by a reload, or when a manifest is added or changed).
    package nonisolated var handlerRegistry: HandlerRegistry { routing.snapshot.registry }
    nonisolated let intake: IntakePipeline
    package nonisolated let dispatcher: HandlerDispatcher
    nonisolated let launcher: HandlerLauncher
    /// Counts for `status` and the metrics.
    package nonisolated let activity: DaemonActivity
    nonisolated let watcher: InboxWatcher
    /// Watches the handlers directory: a manifest added, changed, renamed or removed reloads.
    nonisolated let manifestWatcher: InboxWatcher
    var state = State.initial
    /// The descriptor socket's path once it listens, for `welcome` (answered outside the actor).
    nonisolated let descriptorSocketPath = Mutex<String?>(nil)
    /// `admin_group`, resolved at start and on every reload.
    nonisolated let administrators: Mutex<AdministratorGroup>
    /// The uids handlers run as (`DocRouteUser`), resolved at start and on every reload.
    nonisolated let handlerUsers: Mutex<HandlerUsers>
    /// The daemon's one thread pool, for its blocking work (reloads, the metrics file, opening
    /// a passed file); handed to the parts that need one.
    nonisolated let threadPool: NIOThreadPool
    /// Manifest and defaults changes seen and not yet reloaded (``reloadOnManifestChanges()``).
    nonisolated let requestedReloads = Mutex<(count: Int, reasons: Set<String>)>((0, []))
    /// What each uid may ask of `open` per minute (`open_requests_per_minute`, `open_bytes_per_minute`).
    nonisolated let openBudget: OpenBudget
    /// When an `over-limit` refusal was last logged: one a second at most.
    nonisolated let overLimitLogged = Mutex<ContinuousClock.Instant?>(nil)
    static let version = DocRouteVersion.daemon

    package init(configuration: DaemonConfiguration, backend: LedgerBackend, fleet: FleetDelivery? = nil, notifier: SystemdNotifier?, logger: Logger) throws {
        self.currentConfiguration = Mutex(configuration)
        self.backend = backend
        self.fleet = fleet
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
        // What was loaded before the last stop: a duplicate manifest added meanwhile is refused, not the live handler.
        let previouslyLoaded = LoadedHandlersStore(stateDirectory: configuration.stateDirectory).load()
        let loaded = Self.load(configuration, mimeDatabase: mime.database, previouslyLoaded: previouslyLoaded, logger: logger)
        self.routing = RoutingTable(loaded.routing)
        self.administrators = Mutex(loaded.administrators)
        self.handlerUsers = Mutex(loaded.handlerUsers)
        // Before the pool is made: a pool dropped while running is a programming error to NIO.
        self.watcher = try InboxWatcher(logger: logger)
        self.manifestWatcher = try InboxWatcher(logger: logger, reportRemovals: true)
        self.threadPool = NIOThreadPool(numberOfThreads: 2)
        threadPool.start()
        let activity = DaemonActivity(configuration: configuration, logger: logger, threadPool: threadPool,
                                      ledgerBytes: { [backend] in backend.ledgerBytesOnDisk })
        self.activity = activity
        let launcher = HandlerLauncher(socketPath: configuration.socket, flagDirectory: configuration.launchFlagDirectory, activity: activity, logger: logger)
        self.launcher = launcher
        let routingBox = routing
        // In a fleet the fleet's dispatcher hears of subscriptions and acknowledgements too.
        let observer: any DispatchObserver = fleet.map { FleetDispatchObserver(inner: activity, fleet: $0.dispatcher) } ?? activity
        // In a fleet, a document committed to PostgreSQL launches nothing on the host where it
        // arrived: the fleet chooses the host that launches a handler connected nowhere
        // (``FleetLauncher``). Only what this host's own ledger owes the handler launches it here
        // directly (a package, a mail part, an `open`).
        let owesLocally: (@Sendable (String) async -> Bool)? = fleet == nil ? nil : { @Sendable [backend] bundle in
            ((try? await backend.owedCount(bundleIdentifier: bundle)) ?? 0) > 0
        }
        self.dispatcher = HandlerDispatcher(store: backend, window: configuration.maxUnacknowledged, activity: observer, logger: logger) { bundle in
            guard let handler = routingBox.snapshot.registry.handler(for: bundle) else { return }
            Task {
                if let owesLocally, !(await owesLocally(bundle)) { return }
                await launcher.launchIfNeeded(handler)
            }
        }
        self.intake = IntakePipeline(configuration: configuration, backend: fleet?.backend ?? backend, watcher: watcher, activity: activity, logger: logger)
        self.openBudget = OpenBudget(configuration)
    }

    deinit {
        // A daemon that failed to start, or was never shut down, still lets its pool's threads go.
        threadPool.shutdownGracefully { _ in }
    }

    /// Recovers, loads, listens, watches and scans; READY=1 goes out only after all of it.
    ///
    /// `descriptorEndpoint` is the descriptor socket (systemd's second socket); nil binds it
    /// beside the main socket (``DescriptorSocketServer/path(besides:)``).
    package func start(listeningOn endpoint: SocketServer.Endpoint, descriptorEndpoint: SocketServer.Endpoint? = nil) async throws {
        guard case .initial = state else {
            throw LifecycleError(message: "docrouted's core was started already (it is \(state.name)); it starts once")
        }
        for (directory, key) in [(configuration.stateDirectory, "state_directory"), (configuration.containersDirectory, "containers_directory"),
                                 (configuration.quarantineDirectory, "quarantine_directory")] {
            if try DaemonFolder.create(directory, what: key) {
                logger.notice("created the \(key) \(directory)")
            }
        }
        Self.recordLoadedHandlers(routing.snapshot.registry, configuration, logger: logger)
        try await backend.recover()
        // In a fleet, what a crash left half removed in an inbox has no local row: PostgreSQL
        // settles it, before intake's first look finds what goes back.
        if let fleet {
            _ = await fleet.backend.settleRemovalLeftovers(inboxes: configuration.inboxes.filter { $0.kind == .directory }.map(\.path))
        }
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
        await fleet?.dispatcher.start(routing: { [routing] in routing.snapshot },
                                      committed: { [dispatcher] bundle in await dispatcher.committed(bundleIdentifier: bundle) })
        await fleet?.startLaunching(launchable: { [self] in
                                        Self.launchableHandlers(routing.snapshot, users: handlerUsers.withLock { $0 },
                                                                flagDirectory: configuration.launchFlagDirectory)
                                    },
                                    launch: { [routing, launcher] bundle in
                                        guard let handler = routing.snapshot.registry.handler(for: bundle) else { return }
                                        await launcher.launchIfNeeded(handler)
                                    })
        await intake.start(routing: { [routing] in routing.snapshot },
                           committed: { [dispatcher, fleet] bundle in
                               await dispatcher.committed(bundleIdentifier: bundle)
                               // A document committed to the fleet here may be for a handler subscribed here.
                               fleet?.dispatcher.wake()
                           })
        // The socket last: a client that can connect finds everything else in place.
        let server = SocketServer(group: group, responder: self, limits: ConnectionLimits(configuration),
                                  isHandlerUser: { [self] uid in handlerUsers.withLock { $0.uids.contains(uid) } }, logger: logger)
        do {
            try await server.start(endpoint)
        } catch {
            let code = (error as? IOError)?.errnoCode ?? (error as? SocketServerError)?.errno
            let reason = code.map { "\(Errno(rawValue: $0))" } ?? "\(error)"
            throw DaemonFolder.Failure(path: configuration.socket, description: """
                cannot listen on the socket \(configuration.socket): \(reason) (docrouted runs as uid \(ProcessIdentity.realUserID)); \
                make its folder writable by docrouted's user, set another socket in the configuration, \
                or let systemd pass it (docroute.socket)
                """)
        }
        state = .running(Servers(server: server, descriptorServer: await startDescriptorServer(descriptorEndpoint)))
        _ = try? notifier?.ready()
        await refreshStatus()
        let registry = routing.snapshot.registry
        logger.info("docrouted ready", metadata: [
            "socket": "\(configuration.socket)", "handlers": "\(registry.handlers.count)",
            "inboxes": "\(configuration.inboxes.map(\.path))", "mime-database": "\(mimeDatabase.source)",
        ])
    }

    /// What a load or reload reads: the handlers directory, the defaults, and the user and group
    /// database. It blocks (files, NSS), so a reload runs it on ``threadPool``.
    struct Loaded: Sendable {
        var routing: RoutingSnapshot
        var administrators: AdministratorGroup
        var handlerUsers: HandlerUsers
    }

    /// The uid each handler runs as (`DocRouteUser`, resolved once per load): who may subscribe
    /// as it, and who may use the connections kept for handlers.
    struct HandlerUsers: Sendable {
        /// By lowercased bundle identifier; a user that does not resolve is left out.
        var byBundle: [String: UInt32] = [:]
        var uids: Set<UInt32> = []

        init(_ registry: HandlerRegistry) {
            for handler in registry.handlers {
                guard let uid = HandlerAccount.resolve(handler.manifest.user)?.uid else { continue }
                byBundle[handler.bundleIdentifier.lowercased()] = uid
                uids.insert(uid)
            }
        }
    }

    /// `administrators` is what the last load found, so a reload does not warn again of a
    /// missing admin_group.
    static func load(_ configuration: DaemonConfiguration, mimeDatabase: MIMEDatabase, previouslyLoaded: [String: String],
                     administrators: AdministratorGroup? = nil, logger: Logger) -> Loaded {
        let registry = HandlerDirectory(path: configuration.handlersDirectory)
            .load(logger: logger, previouslyLoaded: previouslyLoaded, userExists: { UserDatabase.user(named: $0) != nil })
        let defaults = loadDefaults(configuration, logger: logger)
        return Loaded(
            routing: RoutingSnapshot(registry: registry, defaults: defaults, mimeDatabase: mimeDatabase,
                                     containersDirectory: configuration.containersDirectory),
            administrators: AdministratorGroup.resolve(configuration.adminGroup, previous: administrators, logger: logger),
            handlerUsers: HandlerUsers(registry))
    }

    /// Reloads the handlers directory and the administrator's defaults (SIGHUP, or a change of
    /// either seen by the watcher; `reason` says which, for the log). Only a running daemon reloads.
    package func reload(reason: String = "SIGHUP", rereadingConfiguration: Bool = false) async throws {
        guard case .running = state else {
            throw LifecycleError(message: "docrouted is \(state.name): handlers and defaults are reloaded only while it runs")
        }
        _ = try? notifier?.reloading()
        if rereadingConfiguration { await rereadConfiguration() }
        let previous = administrators.withLock { $0 }
        // The registry in use decides which of two manifests with one identifier keeps serving.
        let previouslyLoaded = routing.snapshot.registry.loadedFiles
        let loaded = try await threadPool.runIfActive { [configuration, mimeDatabase, logger] in
            let loaded = Self.load(configuration, mimeDatabase: mimeDatabase, previouslyLoaded: previouslyLoaded,
                                   administrators: previous, logger: logger)
            Self.recordLoadedHandlers(loaded.routing.registry, configuration, logger: logger)
            return loaded
        }
        administrators.withLock { $0 = loaded.administrators }
        handlerUsers.withLock { $0 = loaded.handlerUsers }
        routing.replace(with: loaded.routing)
        // The handlers this host can launch may have changed: the fleet hears of it at once.
        fleet?.launcher.wake()
        let registry = loaded.routing.registry
        let defaults = loaded.routing.defaults
        logger.info("handlers and defaults reloaded (\(reason))", metadata: [
            "handlers": "\(registry.handlers.count)", "failed": "\(registry.failures.count)", "warnings": "\(registry.warnings.count)",
            "defaults": "\(defaults.types.count + defaults.schemes.count)",
        ])
        _ = try? notifier?.ready()
        await refreshStatus()
    }

    /// Runs until cancelled: the intake loop, and the watchdog pings from the path that does the work.
    /// Only a started daemon runs.
    package func run() async throws {
        guard case .running = state else {
            throw LifecycleError(message: "docrouted is \(state.name): start it before running it")
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.intake.run() }
            group.addTask { await self.reloadOnManifestChanges() }
            group.addTask { await self.rereadUnreadableManifests() }
            group.addTask { [backend, activity] in await backend.runReclamation { activity.sourcesToReclaim($0) } }
            group.addTask { [backend, routing, days = configuration.historyDays] in
                await backend.runHistoryPruning {
                    Self.historyKeptDays(historyDays: days, retentionDays: routing.snapshot.registry.handlers.compactMap(\.manifest.inboxRetentionDays))
                }
            }
            group.addTask { await self.removeExpiredInboxCopies() }
            if let fleet {
                group.addTask { await fleet.dispatcher.run() }
                group.addTask { await fleet.launcher.run() }
                group.addTask { [days = configuration.historyDays] in await fleet.runPruning(historyDays: days) }
                group.addTask { [activity] in
                    // The fleet's gauges, read every 15 s: often enough for a scrape interval,
                    // one short query for the database.
                    while !Task.isCancelled {
                        let figures = await fleet.figures()
                        activity.fleet(reachable: figures.reachable, hosts: figures.hosts, owed: figures.owed)
                        try? await Task.sleep(for: .seconds(15))
                    }
                }
            }
            group.addTask { [backend, dispatcher] in
                // What a `--recover-ledger` left for lack of time, measured while the daemon works
                // (see LedgerBackend.continueRebuild for why it need not come before).
                await backend.continueRebuild { bundle in await dispatcher.committed(bundleIdentifier: bundle) }
                // The group ends with its first task, which must be the intake loop's.
                while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
            }
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

    /// Stops accepting, lets the batch in hand finish, closes everything. A daemon that never
    /// started, or is shutting down already, has nothing to stop.
    package func shutdown() async {
        guard case .running(let servers) = state else { return }
        state = .shuttingDown(())
        _ = try? notifier?.stopping()
        await servers.server.stop()
        await servers.descriptorServer?.stop()
        await dispatcher.acknowledgementsWritten()
        await fleet?.dispatcher.stop()
        // The last batch's source removals use the inbox folders that stop() closes.
        await fleet?.backend.settle()
        await backend.settle()
        await intake.stop()
        await watcher.stop()
        await manifestWatcher.stop()
        await launcher.terminateAll()
        await activity.flush()
        // Connections still open (subscribed handlers) end here, before their event loop does.
        await servers.server.closeConnections()
        try? await group.shutdownGracefully()
        try? await threadPool.shutdownGracefully()
        state = .finished
    }

    /// The handlers this host can launch: those whose manifest has a launch command and that its
    /// launcher would not refuse (``HandlerLauncher/wouldLaunch(_:uid:flagDirectory:ownUID:)``).
    static func launchableHandlers(_ routing: RoutingSnapshot, users: HandlerUsers, flagDirectory: String?) -> [String] {
        routing.registry.handlers.filter {
            HandlerLauncher.wouldLaunch($0.manifest, uid: users.byBundle[$0.bundleIdentifier.lowercased()], flagDirectory: flagDirectory)
        }.map(\.bundleIdentifier)
    }

    /// `WatchedFolder.inbox` of the handlers folder and of the state directory in `manifestWatcher`.
    static let handlersFolderTag = -1
    static let stateFolderTag = -2

    /// Writes which file each handler was loaded from (``LoadedHandlersStore``), for the next start
    /// and for `docroutectl handlers` and `docrouted --check`. Routing does not depend on it.
    static func recordLoadedHandlers(_ registry: HandlerRegistry, _ configuration: DaemonConfiguration, logger: Logger) {
        let store = LoadedHandlersStore(stateDirectory: configuration.stateDirectory)
        do {
            try store.save(registry.loadedFiles)
        } catch {
            logger.warning("cannot record which manifests are loaded; at the next start a duplicate manifest may take the handler's place: \(error)",
                           metadata: ["path": "\(store.path)"])
        }
    }

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
        let (wakeups, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                var done = 0
                for await _ in wakeups {
                    try? await Task.sleep(for: .milliseconds(200))
                    let (count, reasons) = self.requestedReloads.withLock { state in
                        defer { state.reasons = [] }
                        return state
                    }
                    guard count > done else { continue }
                    done = count
                    do {
                        try await self.reload(reason: reasons.sorted().joined(separator: ", "))
                    } catch {
                        self.logger.notice("handlers not reloaded: \(error)")
                    }
                }
            }
            for await event in manifestWatcher.events {
                guard let reason = Self.reloadReason(event) else { continue }
                requestedReloads.withLock {
                    $0.count += 1
                    $0.reasons.insert(reason)
                }
                wake.yield()
            }
            wake.finish()
            await group.waitForAll()
        }
    }

    /// How often manifests that could not be read are tried again.
    static let unreadableManifestRetry: Duration = .seconds(30)

    /// Reloads every ``unreadableManifestRetry`` while a manifest (or the handlers folder) could
    /// not be read: an I/O error says nothing about the manifest, and the documents its handler
    /// claims wait in their inboxes meanwhile.
    func rereadUnreadableManifests() async {
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: Self.unreadableManifestRetry)
            } catch {
                return
            }
            let unreadable = routing.snapshot.registry.unreadableManifests
            guard !unreadable.isEmpty else { continue }
            do {
                try await reload(reason: "\(unreadable.count) manifest(s) could not be read")
            } catch {
                logger.notice("handlers not reloaded: \(error)")
            }
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
        let registry = routing.snapshot.registry
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
