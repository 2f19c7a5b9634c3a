import ArgumentParser
import DocRouteConfiguration
import DocRouteDaemon
import DocRouteDelivery
import DocRouteFleet
import DocRouteLedger
import DocRoutePlatform
import DocRouteServer
import DocRouteSystemd
import Foundation
import Logging
import ServiceLifecycle
import UnixSignals

/// `docrouted`: the document-routing daemon. Runs in the foreground; systemd supervises it.
@main
struct DocRouted: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "docrouted",
        abstract: "Route files dropped in inbox folders to the handler that claims their type.",
        discussion: "Without --config the embedded default configuration is used (paths under /var/lib/docroute, /run/docroute, /etc/docroute). SIGHUP reloads the handlers and reads the configuration again (inboxes and the keys docroute.toml(5) marks as taken at a reload; any other change is named as needing a restart); SIGTERM stops gracefully.",
        version: "docrouted \(DocRouteVersion.number)")

    @Option(help: "The configuration file (TOML).")
    var config: String?

    @Flag(help: "Log to the systemd journal even when stderr is not connected to it.")
    var journal = false

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    @Flag(help: ArgumentHelp(
        "Check everything docrouted would use, print what was found, and exit.",
        discussion: "The configuration, each handler manifest, the inboxes and the folders docrouted writes (as the user running the check), the MIME database, the socket path. Exits 0 when delivery can go on, 1 when something would stop it, 2 when the configuration cannot be read."))
    var check = false

    @Flag(help: ArgumentHelp(
        "Set a damaged delivery ledger aside and rebuild it from the sandboxes, then exit. Stop the service first.",
        discussion: "The damaged files are kept as ledger.sqlite.damaged-<time>. Every document in a sandbox gets a row again (path, size, SHA-256); one the old ledger still shows acknowledged stays so, any other is announced to its handler again."))
    var recoverLedger = false

    @Option(help: ArgumentHelp(
        "With --recover-ledger: the seconds one document may take to be digested.",
        discussion: "A document that takes longer is owed to its handler again, undigested, and named in the output.",
        valueName: "seconds"))
    var recoverFileSeconds: Double = LedgerRebuild.seconds(LedgerRebuild.Limits.default.perFile)

    @Option(help: ArgumentHelp(
        "With --recover-ledger: the seconds all documents may take together.",
        discussion: "The documents left when they are spent are measured by the daemon after it starts, in the background.",
        valueName: "seconds"))
    var recoverTotalSeconds: Double = LedgerRebuild.seconds(LedgerRebuild.Limits.default.total)

    var recoveryLimits: LedgerRebuild.Limits {
        LedgerRebuild.Limits(perFile: .milliseconds(Int64(max(0, recoverFileSeconds) * 1000)),
                             total: .milliseconds(Int64(max(0, recoverTotalSeconds) * 1000)))
    }

    func run() async throws {
        ProcessLimits.limitMallocArenas()
        ProcessLimits.fixMallocMapThreshold()
        // A SIGHUP before the reload handler is in place must not end the daemon (the default
        // action); it would only ask for a reload of what is being loaded anyway. sigaction fails
        // only for an invalid signal number, which a named signal is not.
        try? ProcessSignal.hangUp.ignore()
        let level = Logger.Level(rawValue: logLevel) ?? .info
        let logging = LoggingBootstrap.choose(forceJournal: journal, syslogIdentifier: "docrouted", logLevel: level)
        logging.bootstrap()
        let destination = logging.destination
        do {
            try await serve(destination: destination)
        } catch let exit as ExitCode {
            throw exit
        } catch {
            // Anything else would be printed by the argument parser with one plain write to
            // stderr, lost when that write fails: the reason is the one line that must get out.
            Self.stop("\(error)", destination: destination)
            throw ExitCode(1)
        }
    }

    /// Says why docrouted stops, where its logs go, through ``FinalLine`` (retried, never lost to
    /// a passing write error).
    static func stop(_ message: String, destination: LoggingBootstrap.Destination) {
        FinalLine.report(message, destination: destination, syslogIdentifier: "docrouted")
    }

    func serve(destination: LoggingBootstrap.Destination) async throws {
        let logger = Logger(label: "docrouted")
        var configuration: DaemonConfiguration
        do {
            configuration = try config.map { path throws(ConfigurationError) in try DaemonConfiguration.load(path: path) } ?? DaemonConfiguration.embeddedDefault()
        } catch {
            Self.stop("configuration error: \(error)", destination: destination)
            throw ExitCode(2)
        }
        if check {
            throw ExitCode(await Self.check(configuration))
        }
        // One daemon per state directory, decided before anything is touched: a second one would
        // deliver every file again and take the first one's socket.
        let stateLock: StateDirectoryLock
        do {
            stateLock = try StateDirectoryLock.acquire(stateDirectory: configuration.stateDirectory, mode: LedgerBackend.stateDirectoryMode(configuration))
        } catch {
            Self.stop("\(error)", destination: destination)
            throw ExitCode(1)
        }
        defer { withExtendedLifetime(stateLock) {} }
        if recoverLedger {
            return try Self.recoverLedger(configuration, limits: recoveryLimits, logger: logger, destination: destination)
        }
        let activation: SocketActivation
        let endpoint: SocketServer.Endpoint
        var descriptorEndpoint: SocketServer.Endpoint?
        do {
            activation = try SocketActivation()
            if let descriptor = try activation.descriptor() {
                endpoint = .descriptor(descriptor)
                // Launched handlers are told where to connect: where systemd's socket really is.
                if let path = SocketServer.boundPath(of: descriptor), path != configuration.socket {
                    logger.notice("socket passed by systemd differs from the configuration's; handlers are told the passed one",
                                  metadata: ["socket": "\(path)", "configured": "\(configuration.socket)"])
                    configuration.socket = path
                }
                // docroute.socket's second ListenStream= (same FileDescriptorName, told apart by
                // its path), or a unit of its own named "descriptor": where descriptors are passed.
                if let passed = activation.descriptors.first(where: {
                    $0.name == "descriptor" || ($0.fileDescriptor != descriptor && SocketServer.boundPath(of: $0.fileDescriptor)?.hasSuffix(".fd.sock") == true)
                }) {
                    descriptorEndpoint = .descriptor(passed.fileDescriptor)
                }
            } else {
                try DaemonFolder.create((configuration.socket as NSString).deletingLastPathComponent, what: "socket's folder")
                // Checked before the ledger is opened: a socket another daemon serves stops this one here.
                try SocketServer.removeStaleSocket(at: configuration.socket)
                endpoint = .path(configuration.socket)
            }
        } catch {
            Self.stop("the socket cannot be set up: \(error)", destination: destination)
            throw ExitCode(1)
        }
        let descriptors = ProcessLimits.raiseDescriptorLimit()
        let needed = configuration.descriptorsNeeded + DaemonConfiguration.descriptorReserve
        if descriptors < needed {
            logger.critical("the descriptor limit is \(descriptors), below the \(needed) docrouted may need with this configuration (what max_connections and the intake's batches may hold, and a reserve for the runtime): raise LimitNOFILE (ulimit -n), or lower max_connections", metadata: [
                "message-id": "descriptor-limit", "limit": "\(descriptors)", "needed": "\(needed)",
            ])
        } else {
            logger.debug("descriptor limit", metadata: ["limit": "\(descriptors)", "needed": "\(needed)"])
        }
        let backend: LedgerBackend
        do {
            backend = try LedgerBackend(configuration: configuration, logger: logger)
        } catch let error as DeliveryError where error.code == .ledgerDamaged {
            // Logged (critical) by the ledger; said again, as the last line, where it must be seen.
            Self.stop(error.message, destination: destination)
            throw ExitCode(Self.ledgerDamagedExitCode)
        }
        // A ledger removed, replaced or damaged under the running daemon: stop at once, before
        // another source is removed from its inbox on the strength of a commit that is lost.
        // systemd restarts the daemon, whose start-up check then refuses with the steps.
        let watch = try backend.watchLedger { error in
            Self.stop("stopping at once: \(error.message) (\(error.code.rawValue))", destination: destination)
            ImmediateExit.exit(status: Self.ledgerDamagedExitCode)
        }
        // The password is read once, here: a file that cannot be read stops the start, as a
        // configuration error would; PostgreSQL itself not answering does not (FleetMembership).
        var fleetMembership: FleetMembership?
        var fleetDelivery: FleetDelivery?
        if let fleet = configuration.fleet {
            do throws(FleetError) {
                let password = try FleetPassword.read(fleet, environment: ProcessInfo.processInfo.environment)
                let database = try FleetDatabase(configuration: fleet, password: password)
                fleetMembership = FleetMembership(database: database, host: .loading(configuration, fleet: fleet), logger: logger)
                // One queue for the host: intake commits through it, the dispatcher claims through it.
                let queue = FleetQueue(database: database, hostName: fleet.hostName, logger: logger)
                fleetDelivery = FleetDelivery(queue: queue, local: backend, configuration: configuration, fleet: fleet, logger: logger)
            } catch {
                Self.stop("fleet: \(error)", destination: destination)
                throw ExitCode(1)
            }
        }
        let daemon = try RoutingDaemon(configuration: configuration, backend: backend, fleet: fleetDelivery, notifier: SystemdNotifier(), logger: logger)
        daemon.activity.metrics.bootstrapMetricsSystem()
        let fleetService = fleetMembership.map { membership in
            var membership = membership
            let (name, version) = (membership.host.name, membership.host.version)
            membership.currentHost = { [daemon] in FleetHost(name: name, registry: daemon.handlerRegistry, version: version) }
            return FleetService(membership: membership)
        }
        let service = DaemonService(daemon: daemon, endpoint: endpoint, descriptorEndpoint: descriptorEndpoint,
                                    ledgerWatch: watch, backend: backend, logger: logger)
        let group = ServiceGroup(configuration: .init(
            // The fleet first: services stop in reverse order, so the daemon finishes its batch
            // before the host's heartbeat stops.
            services: (fleetService.map { [.init(service: $0, successTerminationBehavior: .ignore)] } ?? []) + [.init(service: service)],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        try await group.run()
    }
}

extension DocRouted {
    /// The exit status when the ledger is damaged, gone or replaced (documented in the README).
    static let ledgerDamagedExitCode: Int32 = 3

    static func recoverLedger(_ configuration: DaemonConfiguration, limits: LedgerRebuild.Limits, logger: Logger,
                              destination: LoggingBootstrap.Destination) throws {
        let report: LedgerRebuild.Report
        do {
            report = try LedgerRebuild.run(configuration: configuration, limits: limits, logger: logger)
        } catch {
            Self.stop("the ledger could not be rebuilt: \(error)", destination: destination)
            throw ExitCode(1)
        }
        for file in report.damagedFiles { print("kept the damaged file as \(file)") }
        if report.damagedFiles.isEmpty { print("there was no ledger; a new one was made") }
        print("rows read from the damaged ledger: \(report.salvagedRows)\(report.salvageComplete ? "" : " (it could not be read to its end)")")
        print("documents found in the sandboxes: \(report.documents)")
        print("  kept their old rows (and whether they were acknowledged): \(report.kept)")
        print("  owed to their handlers again: \(report.owed)")
        print("URL deliveries kept: \(report.urls)")
        for entry in report.unreadable { print("not readable, left out: \(entry)") }
        for path in report.undigested {
            print("not digested within \(LedgerRebuild.seconds(limits.perFile)) s (--recover-file-seconds), owed to its handler again: \(path)")
        }
        if report.deferred > 0 {
            print("left when the \(LedgerRebuild.seconds(limits.total)) s of --recover-total-seconds were spent: \(report.deferred) documents; they are measured by the daemon after it starts, in the background")
        }
        print("start the service again: systemctl start docroute")
    }

    /// Prints one line per finding and a summary; returns the exit status (1 when anything would
    /// stop delivery).
    static func check(_ configuration: DaemonConfiguration) async -> Int32 {
        print("configuration \(configuration.file): valid (\(configuration.inboxes.count) inboxes); checked as uid \(ProcessIdentity.realUserID)")
        let passed = ProcessInfo.processInfo.environment["LISTEN_FDS"] != nil
        var findings = ConfigurationCheck(configuration: configuration)
            .run(mime: MIMEDatabaseChoice(environment: ProcessInfo.processInfo.environment), socketPassedBySystemd: passed)
        if let fleet = configuration.fleet {
            // The driver's own lines would come between the findings: only the findings are said.
            let quiet = Logger(label: "docrouted.check", factory: { _ in SwiftLogNoOpLogHandler() })
            findings += await FleetCheck(configuration: fleet, environment: ProcessInfo.processInfo.environment,
                                         host: .loading(configuration, fleet: fleet)).run(logger: quiet)
        }
        for finding in findings { print(finding.description) }
        let fatal = findings.filter { $0.severity == .fatal }.count
        let warnings = findings.filter { $0.severity == .warning }.count
        if fatal > 0 {
            print("\(fatal) problem\(fatal == 1 ? "" : "s") would stop delivery\(warnings > 0 ? ", \(warnings) warning\(warnings == 1 ? "" : "s")" : ""); fix the FAILED lines and run docrouted --check again")
            return 1
        }
        print("ready to deliver\(warnings > 0 ? " (\(warnings) warning\(warnings == 1 ? "" : "s"))" : "")")
        return 0
    }
}

/// The host's membership of the fleet as a service: joins and beats until the daemon stops.
struct FleetService: Service, CustomStringConvertible {
    let membership: FleetMembership

    /// What ServiceGroup logs of it: the membership's own words, which leave the password out.
    var description: String { "FleetService(\(membership))" }

    func run() async throws {
        await cancelWhenGracefulShutdown { await membership.run() }
    }
}

/// The daemon as a service-lifecycle service: start, serve until a shutdown signal, finish in-flight
/// work, stop. SIGHUP reloads the handlers and the configuration.
struct DaemonService: Service {
    let daemon: RoutingDaemon
    let endpoint: SocketServer.Endpoint
    let descriptorEndpoint: SocketServer.Endpoint?
    let ledgerWatch: any LedgerWatching
    let backend: LedgerBackend
    let logger: Logger

    func run() async throws {
        // Trap SIGHUP before READY=1 can go out: a reload asked for at once must be a reload.
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        do {
            try await daemon.start(listeningOn: endpoint, descriptorEndpoint: descriptorEndpoint)
        } catch {
            // Failing to start (a socket it cannot bind, say) releases the ledger, which removes its
            // -wal: disarm the watch first, so the error the user needs is the one they see.
            ledgerWatch.stop()
            throw error
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in hangups {
                    logger.info("SIGHUP: reloading the handlers and the configuration")
                    do {
                        try await daemon.reload(reason: "SIGHUP", rereadingConfiguration: true)
                    } catch {
                        logger.notice("SIGHUP: \(error)")
                    }
                }
            }
            group.addTask {
                do {
                    try await cancelWhenGracefulShutdown { try await daemon.run() }
                } catch {
                    logger.error("\(error)")
                }
            }
            await group.next()
            group.cancelAll()
        }
        logger.info("stopping: finishing the batch in hand")
        await daemon.shutdown()
        // Closing the ledger removes its -wal file: that is no reason to alarm.
        ledgerWatch.stop()
        backend.close()
    }
}
