import ArgumentParser
import DocRouteHandlers
import DocRouteIntake
import DocRoutePlatform
import DocRouteTypes
import Foundation

struct HandlersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "handlers",
        abstract: "List registered handlers with what they claim, what their manifests said that was read otherwise, and manifests that failed to load.",
        discussion: """
            Manifests are read as Launch Services reads them: a document type with an unknown role or rank \
            is skipped, a string stands for a one-element array, white space is trimmed, a parent type \
            nobody declares stays a name, a key a letter or two from one docroute reads \
            (CFBundleDocumentType) is named with the likely key, and a handler that claims no type and \
            no scheme is pointed out. Each of these is a warning naming the file and the key path; the \
            handler still loads. A manifest fails when its DocRouteUser is not a user of this host, or \
            when another manifest has its bundle identifier: the one docrouted loaded before keeps \
            serving (its state directory records which) and the other is refused, both files named; \
            with neither loaded before, both are refused. Exits 1 when any manifest failed to load, 0 \
            with warnings only. \
            With --unit, prints instead the shell lines that make systemd start that handler on demand \
            as its own user (docroute-handler@USER.service and .path): docroutectl handlers --unit ID | sh
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
                if let failure = registry.failures.first(where: { $0.bundleIdentifier?.lowercased() == unitBundle.lowercased() }) {
                    throw ValidationError("\(unitBundle) is not loaded: \(failure.error)")
                }
                throw ValidationError("no handler \(unitBundle) in \(try options.handlersDirectory()); docroutectl handlers lists them")
            }
            // The configuration the daemon uses (--config, $DOCROUTE_CONFIG, /etc/docroute/docroute.toml).
            let configuration = try options.configuration()
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
                    "warnings": registry.warnings.filter { $0.file == handler.manifest.file }.map {
                        ["code": $0.code.rawValue, "keyPath": $0.keyPath, "message": $0.message]
                    },
                ]
            }
            let failures: [[String: Any]] = registry.failures.map { failure in
                ["file": failure.file, "bundleIdentifier": JSONOutput.orNull(failure.bundleIdentifier), "status": "failed",
                 "code": failure.error.code.rawValue, "keyPath": failure.error.inputKey ?? "", "error": failure.error.message]
            }
            let issues: [[String: Any]] = registry.typeIssues.map {
                ["file": JSONOutput.orNull($0.inputFile), "keyPath": JSONOutput.orNull($0.inputKey), "code": $0.code.rawValue, "message": $0.message]
            }
            let warnings: [[String: Any]] = registry.warnings.map {
                ["file": $0.file, "keyPath": $0.keyPath, "code": $0.code.rawValue, "message": $0.message]
            }
            try JSONOutput.print(["handlers": handlers, "failed": failures, "warnings": warnings, "typeIssues": issues])
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
                for warning in registry.warnings where warning.file == handler.manifest.file {
                    print("  warning \(warning.keyPath.isEmpty ? "" : warning.keyPath + ": ")\(warning.message)")
                }
            }
            let handlerFiles = Set(registry.handlers.map(\.manifest.file))
            for warning in registry.warnings where !handlerFiles.contains(warning.file) {
                print("WARNING \(warning)")
            }
            for failure in registry.failures {
                print("FAILED  \(failure.error)")
            }
            if !registry.warnings.isEmpty || !registry.failures.isEmpty {
                print("\(registry.handlers.count) loaded, \(registry.warnings.count) warning\(registry.warnings.count == 1 ? "" : "s"), \(registry.failures.count) failed")
            }
            if registry.handlers.isEmpty && registry.failures.isEmpty {
                print("no handlers in \(try options.handlersDirectory())")
            }
        }
        if !registry.failures.isEmpty { throw ExitCode(1) }
    }
}
