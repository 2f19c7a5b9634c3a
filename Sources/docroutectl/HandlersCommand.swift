import ArgumentParser
import DocRouteCore
import DocRouteHandlers
import DocRouteTypes
import Foundation

struct HandlersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "handlers",
        abstract: "List registered handlers with what they claim, and manifests that failed to load.",
        discussion: """
            Exits 1 when any manifest failed, so scripts notice. With --unit, prints instead the shell \
            lines that make systemd start that handler on demand as its own user \
            (docroute-handler@USER.service and .path): docroutectl handlers --unit ID | sh
            """)

    @OptionGroup var options: HandlerOptions

    @Flag(help: "Print JSON.")
    var json = false

    @Option(name: .customLong("unit"), help: ArgumentHelp("Print the systemd set-up that launches this handler on demand.", valueName: "bundle-id"))
    var unitBundle: String?

    func run() throws {
        let registry = try options.registry()
        if let unitBundle {
            guard let handler = registry.handler(for: unitBundle) else {
                throw ValidationError("no handler \(unitBundle) in \(try options.handlersDirectory()); docroutectl handlers lists them")
            }
            let configuration: DaemonConfiguration
            if options.config == nil, FileManager.default.fileExists(atPath: "/etc/docroute/docroute.toml") {
                do { configuration = try DaemonConfiguration.load(path: "/etc/docroute/docroute.toml") } catch { throw ValidationError("\(error)") }
            } else {
                configuration = try options.configuration()
            }
            print(try HandlerUnitLines(handler: handler, configuration: configuration).script())
            return
        }
        if json {
            let handlers: [[String: Any]] = registry.handlers.map { handler in
                [
                    "bundleIdentifier": handler.bundleIdentifier,
                    "name": JSONOutput.orNull(handler.manifest.name),
                    "file": handler.manifest.file,
                    "status": "loaded",
                    "user": handler.manifest.user.description,
                    "launchCommand": handler.manifest.launchCommand ?? NSNull(),
                    "documentTypes": handler.claims.map { ["contentType": $0.contentType, "rank": $0.rank.rawValue, "role": $0.role.rawValue, "isPackage": $0.isPackage] as [String: Any] },
                    "exportedTypes": handler.manifest.exportedTypes.map(\.identifier),
                    "importedTypes": handler.manifest.importedTypes.map(\.identifier),
                    "urlSchemes": handler.manifest.schemes,
                ]
            }
            let failures: [[String: Any]] = registry.failures.map { failure in
                ["file": failure.file, "bundleIdentifier": JSONOutput.orNull(failure.bundleIdentifier), "status": "failed",
                 "code": failure.error.code.rawValue, "keyPath": failure.error.keyPath, "error": failure.error.message]
            }
            let issues: [[String: Any]] = registry.typeIssues.map {
                ["file": JSONOutput.orNull($0.file), "keyPath": JSONOutput.orNull($0.keyPath), "code": $0.code.rawValue, "message": $0.message]
            }
            try JSONOutput.print(["handlers": handlers, "failed": failures, "typeIssues": issues])
        } else {
            for handler in registry.handlers {
                print("\(handler.bundleIdentifier)\(handler.manifest.name.map { " (\($0))" } ?? "")  [\(handler.manifest.file)]")
                for claim in handler.claims {
                    print("  opens   \(claim.contentType)  rank \(claim.rank.rawValue), role \(claim.role.rawValue)\(claim.isPackage ? ", package" : "")")
                }
                for type in handler.manifest.exportedTypes { print("  exports \(type.identifier)  .\(type.filenameExtensions.joined(separator: " ."))") }
                for type in handler.manifest.importedTypes { print("  imports \(type.identifier)") }
                for scheme in handler.manifest.schemes { print("  scheme  \(scheme)://") }
                print("  user    \(handler.manifest.user)\(handler.manifest.launchCommand.map { "; launched with \($0.joined(separator: " "))" } ?? "")")
            }
            for failure in registry.failures {
                print("FAILED  \(failure.error)")
            }
            for issue in registry.typeIssues {
                print("type declaration skipped: \(issue)")
            }
            if registry.handlers.isEmpty && registry.failures.isEmpty {
                print("no handlers in \(try options.handlersDirectory())")
            }
        }
        if !registry.failures.isEmpty { throw ExitCode(1) }
    }
}
