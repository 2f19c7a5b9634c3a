import ArgumentParser
import DocRouteConfiguration
import DocRouteDaemon
import DocRouteDelivery
import DocRouteLedger
import DocRoutePlatform
import DocRouteServer
import DocRouteSystemd
import Foundation
import Logging
import ServiceLifecycle
import UnixSignals
#if canImport(Glibc)
import Glibc
#endif

/// `docrouted`: the document-routing daemon. Runs in the foreground; systemd supervises it.
@main
struct DocRouted: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "docrouted",
        abstract: "Route files dropped in inbox folders to the handler that claims their type.",
        discussion: "Without --config the embedded default configuration is used (paths under /var/lib/docroute, /run/docroute, /etc/docroute). SIGHUP reloads the handlers; SIGTERM stops gracefully.")

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

    func run() async throws {
        ProcessLimits.limitMallocArenas()
        // A SIGHUP before the reload handler is in place must not end the daemon (the default
        // action); it would only ask for a reload of what is being loaded anyway.
        signal(SIGHUP, SIG_IGN)
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingBootstrap.choose(forceJournal: journal, syslogIdentifier: "docrouted", logLevel: level).bootstrap()
        let logger = Logger(label: "docrouted")
        var configuration: DaemonConfiguration
        do {
            configuration = try config.map { path throws(ConfigurationError) in try DaemonConfiguration.load(path: path) } ?? DaemonConfiguration.embeddedDefault()
        } catch {
            FileHandle.standardError.write(Data("docrouted: configuration error: \(error)\n".utf8))
            throw ExitCode(2)
        }
        if check {
            throw ExitCode(Self.check(configuration))
        }
        // One daemon per state directory, decided before anything is touched: a second one would
        // deliver every file again and take the first one's socket.
        let stateLock: StateDirectoryLock
        do {
            stateLock = try StateDirectoryLock.acquire(stateDirectory: configuration.stateDirectory, mode: LedgerBackend.stateDirectoryMode(configuration))
        } catch {
            FileHandle.standardError.write(Data("docrouted: \(error)\n".utf8))
            logger.critical("\(error)")
            throw ExitCode(1)
        }
        defer { withExtendedLifetime(stateLock) {} }
        if recoverLedger {
            return try Self.recoverLedger(configuration, logger: logger)
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
            FileHandle.standardError.write(Data("docrouted: the socket cannot be set up: \(error)\n".utf8))
            logger.critical("the socket cannot be set up: \(error)")
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
            // Logged (critical) by the ledger; said again where a person running it by hand looks.
            FileHandle.standardError.write(Data("docrouted: \(error.message)\n".utf8))
            throw ExitCode(Self.ledgerDamagedExitCode)
        }
        // A ledger removed, replaced or damaged under the running daemon: stop at once, before
        // another source is removed from its inbox on the strength of a commit that is lost.
        // systemd restarts the daemon, whose start-up check then refuses with the steps.
        let watch = try backend.watchLedger { error in
            logger.critical("stopping at once: \(error.message)", metadata: ["code": "\(error.code.rawValue)"])
            FileHandle.standardError.write(Data("docrouted: stopping at once: \(error.message)\n".utf8))
            _exit(Self.ledgerDamagedExitCode)
        }
        let daemon = try RoutingDaemon(configuration: configuration, backend: backend, notifier: SystemdNotifier(), logger: logger)
        daemon.activity.metrics.bootstrapMetricsSystem()
        let service = DaemonService(daemon: daemon, endpoint: endpoint, descriptorEndpoint: descriptorEndpoint,
                                    ledgerWatch: watch, backend: backend, logger: logger)
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: service)],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        try await group.run()
    }
}

extension DocRouted {
    /// The exit status when the ledger is damaged, gone or replaced (documented in the README).
    static let ledgerDamagedExitCode: Int32 = 3

    static func recoverLedger(_ configuration: DaemonConfiguration, logger: Logger) throws {
        let report: LedgerRebuild.Report
        do {
            report = try LedgerRebuild.run(configuration: configuration, logger: logger)
        } catch {
            FileHandle.standardError.write(Data("docrouted: the ledger could not be rebuilt: \(error)\n".utf8))
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
        print("start the service again: systemctl start docroute")
    }

    /// Prints one line per finding and a summary; returns the exit status (1 when anything would
    /// stop delivery).
    static func check(_ configuration: DaemonConfiguration) -> Int32 {
        print("configuration \(configuration.file): valid (\(configuration.inboxes.count) inboxes); checked as uid \(getuid())")
        let passed = ProcessInfo.processInfo.environment["LISTEN_FDS"] != nil
        let findings = ConfigurationCheck(configuration: configuration)
            .run(mime: MIMEDatabaseChoice(environment: ProcessInfo.processInfo.environment), socketPassedBySystemd: passed)
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

/// The daemon as a service-lifecycle service: start, serve until a shutdown signal, finish in-flight
/// work, stop. SIGHUP reloads the handlers.
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
                    logger.info("SIGHUP: reloading handlers")
                    do {
                        try await daemon.reload()
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
