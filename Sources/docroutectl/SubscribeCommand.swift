import ArgumentParser
import DocRouteClient
import Foundation

/// `docroutectl subscribe`: be a handler from the shell, or run a program as one.
struct SubscribeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "subscribe",
        abstract: "Act as a handler: subscribe as BUNDLE_ID and print each event as one JSON line.",
        discussion: """
            Each `launch` and `openURL` message is printed on standard output as one line of JSON, \
            as docs/PROTOCOL.md defines it. The plain launch of a handler with nothing waiting \
            ({"type":"launch","launchOptions":{}}) is printed too; it has nothing to acknowledge \
            and --count does not count it.

            Without --exec each document is acknowledged handled:true once printed. With --exec, \
            CMD runs once per document, in order, with the document as its last argument: the \
            local path for a file (decoded from its file:// URL, bytes as they are) or the URL \
            itself for a custom scheme. Exit status 0 acknowledges handled:true; another status \
            or a signal acknowledges handled:false. Either way the document is not sent again. \
            CMD's standard output goes to standard error, so standard output stays JSON lines. \
            CMD also finds DOCROUTE_EVENT (launch or openURL), DOCROUTE_DELIVERY_ID, DOCROUTE_URL, \
            DOCROUTE_CONTENT_TYPE, DOCROUTE_MAILBOX, DOCROUTE_SOURCE_APPLICATION and \
            DOCROUTE_EVENT_JSON (the printed line) in its environment. When CMD cannot be started \
            the command exits 1 without acknowledging, so the document stays owed.

            --exec takes the rest of the command line, so it comes last: \
            `--exec open-molecule --verbose` runs `open-molecule --verbose PATH`. A single word \
            after --exec is split as a shell would split it (quotes and backslashes; nothing is \
            expanded), so `--exec "open-molecule --verbose"` does the same; that is how a systemd \
            unit's `--exec ${HANDLER_COMMAND}` passes a command. Quote a program path with blanks \
            in it inside that word: --exec "'/opt/My Tools/open-molecule' --verbose".

            Exit status: 0 after --count documents; 78 (EX_CONFIG) when docrouted refuses the \
            handler for good (unknown-handler, not-permitted), so a systemd unit can stop \
            restarting it with RestartPreventExitStatus=78; 1 when another connection is the \
            handler (already-subscribed), docrouted cannot be reached, or it goes away.

            With --compete, several `docroutectl subscribe --compete` of one handler (on this \
            host, or on hosts of a fleet) share its documents: each goes to one of them, the one \
            with the fewest unacknowledged, and what one leaves unacknowledged when it ends goes \
            to the others.
            """)

    @OptionGroup var daemon: DaemonSocketOptions

    @Argument(help: "The handler's bundle identifier (CFBundleIdentifier in its manifest).")
    var bundleIdentifier: String

    @Option(help: ArgumentHelp("Exit 0 after N documents (a plain launch is not one).", valueName: "n"))
    var count: Int?

    @Flag(help: "Print only the JSON lines: no notes on standard error about subscribing and acknowledging.")
    var json = false

    @Flag(help: "Be one of the handler's competing instances: each document goes to one of them (every instance must say --compete).")
    var compete = false

    @Option(
        parsing: .remaining,
        help: ArgumentHelp(
            "Run CMD for each document and acknowledge with its exit status; takes the rest of the line (see above).",
            valueName: "cmd"))
    var exec: [String] = []

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        // An empty .remaining cannot be told from an absent option; the raw arguments can.
        if exec.isEmpty, CommandLine.arguments.dropFirst().contains("--exec") {
            throw ValidationError("--exec needs a command, e.g. --exec /usr/local/bin/open-molecule --verbose")
        }
        if !exec.isEmpty { _ = try handlerCommand() }
    }

    private func handlerCommand() throws -> HandlerCommand? {
        guard !exec.isEmpty else { return nil }
        do {
            return try HandlerCommand(arguments: exec)
        } catch {
            throw ValidationError(error.description)
        }
    }

    func run() async throws {
        let command = try handlerCommand()
        let connection = try await daemon.connectReporting()
        do {
            try await serve(on: connection, command: command)
        } catch {
            await connection.close()
            throw error
        }
        await connection.close()
    }

    private func serve(on connection: DocRouteConnection, command: HandlerCommand?) async throws {
        let pending: Int
        do {
            _ = try await connection.hello()
            pending = try await connection.subscribe(bundleIdentifier: bundleIdentifier, compete: compete)
        } catch {
            throw error.report("subscribe as \(bundleIdentifier)", status: Self.isRefusedForGood(error) ? Self.refusedStatus : 1)
        }
        note("subscribed as \(bundleIdentifier) on \(daemon.path); \(pending) document\(pending == 1 ? "" : "s") waiting")
        var documents = 0
        do {
            for try await event in connection.events {
                switch event {
                case .launch(let options):
                    let line = DaemonMessage.launch(options.document).encodedLine()
                    StandardStreams.output(line)
                    guard let document = options.document else { continue }
                    try await take(document, kind: "launch", line: line, on: connection, command: command)
                case .openURL(let document):
                    let line = DaemonMessage.openURL(document).encodedLine()
                    StandardStreams.output(line)
                    try await take(document, kind: "openURL", line: line, on: connection, command: command)
                case .daemonError(let error):
                    // A refused acknowledgement (not-found) is the daemon's to explain; go on.
                    StandardStreams.error("docrouted reported \(error.code): \(error.message)")
                    continue
                }
                documents += 1
                if let count, documents >= count { break }
            }
        } catch let error as DocRouteClientError {
            throw error.report("go on as \(bundleIdentifier)")
        }
        guard let count, documents >= count else {
            throw ExitCode.failure
        }
        // The ack has no reply; a hello answered after it means docrouted has taken it.
        _ = try? await connection.hello()
    }

    /// Hands one document to the command (if any) and acknowledges it with the outcome.
    private func take(
        _ document: DocumentEvent, kind: String, line: [UInt8], on connection: DocRouteConnection,
        command: HandlerCommand?
    ) async throws {
        var handled = true
        if let command {
            let target: [UInt8]
            if document.isFileURL {
                guard let path = document.filePathBytes else {
                    StandardStreams.error("\(document.deliveryID): '\(document.urlString)' is not a local file URL; declining it")
                    try await acknowledge(document, handled: false, on: connection)
                    return
                }
                target = path
            } else {
                target = Array(document.urlString.utf8)
            }
            let outcome: HandlerCommand.Outcome
            do {
                outcome = try await command.run(target: target, environment: Self.environment(for: document, kind: kind, line: line))
            } catch {
                StandardStreams.error("\(error); \(document.deliveryID) is not acknowledged and will come again")
                throw ExitCode.failure
            }
            handled = outcome.handled
            if !handled { note("\(command.words[0]) \(outcome.summary) for \(document.deliveryID)") }
        }
        try await acknowledge(document, handled: handled, on: connection)
    }

    private func acknowledge(_ document: DocumentEvent, handled: Bool, on connection: DocRouteConnection) async throws {
        do {
            try await connection.acknowledge(deliveryID: document.deliveryID, handled: handled)
        } catch {
            throw error.report("acknowledge \(document.deliveryID)")
        }
        note("acknowledged \(document.deliveryID) handled:\(handled)")
    }

    /// EX_CONFIG: trying again cannot help, so a unit can say RestartPreventExitStatus=78.
    static let refusedStatus: Int32 = 78

    /// Refusals that no retry changes: the handler is unknown or this user may not be it.
    static func isRefusedForGood(_ error: DocRouteClientError) -> Bool {
        switch error.daemonCode {
        case .unknownHandler?, .notPermitted?, .unsupportedProtocol?, .badRequest?: true
        default: false
        }
    }

    static func environment(for document: DocumentEvent, kind: String, line: [UInt8]) -> [String: String] {
        var environment = [
            "DOCROUTE_EVENT": kind,
            "DOCROUTE_DELIVERY_ID": document.deliveryID,
            "DOCROUTE_URL": document.urlString,
        ]
        environment["DOCROUTE_CONTENT_TYPE"] = document.contentType
        environment["DOCROUTE_MAILBOX"] = document.mailbox
        environment["DOCROUTE_SOURCE_APPLICATION"] = document.sourceApplication
        // Linux refuses a single environment string over 128 KiB (MAX_ARG_STRLEN); leave such a line out.
        if line.count < 65_536 {
            environment["DOCROUTE_EVENT_JSON"] = String(decoding: line.dropLast(), as: UTF8.self)
        }
        return environment
    }

    private func note(_ text: String) {
        if !json { StandardStreams.error(text) }
    }
}
