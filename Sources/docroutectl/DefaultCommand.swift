import ArgumentParser
import DocRouteConfiguration
import DocRouteHandlers
import Foundation

struct DefaultCommand: ParsableCommand {
    /// Writes defaults.json, saying on which path when it cannot.
    static func save(_ defaults: AdminDefaults, to store: AdminDefaultsStore) throws(CtlError) {
        do {
            try store.save(defaults)
        } catch {
            throw CtlError("cannot save the administrator's defaults in \(store.path): \(error); run as root or as docrouted's user")
        }
    }

    static let configuration = CommandConfiguration(
        commandName: "default",
        abstract: "Keep the administrator's default handler for a type or URL scheme.",
        subcommands: [Set.self, Unset.self, List.self])

    /// A URL scheme is written with a trailing ':' or '://', or is a scheme some handler claims.
    static func isScheme(_ key: String, registry: HandlerRegistry) -> (Bool, String) {
        if key.hasSuffix("://") { return (true, String(key.dropLast(3)).lowercased()) }
        if key.hasSuffix(":") { return (true, String(key.dropLast()).lowercased()) }
        let claimed = registry.handlers.contains { $0.manifest.schemes.contains(key.lowercased()) }
        return (claimed && !registry.catalog.contains(key), key.lowercased())
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make BUNDLE_ID the default for TYPE or SCHEME (write a scheme as 'todolist:').",
            discussion: """
                The default picks among the handlers that claim the type (or a type it conforms to): \
                it cannot send a file to a handler that does not claim it. A type that no handler claims \
                and the type catalog does not know (a typing mistake, or a dyn. type) is refused, as is a \
                scheme no handler claims, unless --force. docrouted takes the change by itself; the \
                command waits until it has (at most 5 s) and says so.
                """)
        @OptionGroup var options: HandlerOptions
        @Option(help: ArgumentHelp("docrouted's socket, to confirm it took the change (default: $DOCROUTE_SOCKET, else socket of the configuration).", valueName: "path"))
        var socket: String?
        @Flag(help: "Set it even for a type or scheme that no handler claims and the catalog does not know.")
        var force = false
        @Argument(help: "A type identifier (public.plain-text) or a URL scheme (todolist:).") var key: String
        @Argument(help: "The handler's bundle identifier.") var bundleIdentifier: String

        func run() async throws {
            let registry = try options.registry()
            guard let handler = registry.handler(for: bundleIdentifier) else {
                throw CtlError("no registered handler is '\(bundleIdentifier)' in \(try options.handlersDirectory()); `docroutectl handlers` lists them")
            }
            let store = AdminDefaultsStore(stateDirectory: try options.stateDirectoryPath())
            var defaults = try options.defaults()
            let (scheme, normalized) = DefaultCommand.isScheme(key, registry: registry)
            if scheme {
                let claimed = registry.handlers.contains { $0.manifest.schemes.contains(normalized) }
                guard claimed || force else {
                    throw CtlError("no handler claims the URL scheme \(normalized): (CFBundleURLSchemes), so a default for it would never be used; install a handler that claims it, or pass --force")
                }
                defaults.schemes[normalized] = handler.bundleIdentifier
            } else {
                let claimers = registry.handlers.filter { $0.claims.contains { $0.contentType.lowercased() == normalized } }
                guard !claimers.isEmpty || registry.catalog.contains(normalized) || force else {
                    throw CtlError("""
                        no handler claims \(key) and the type catalog does not know it, so a default for it would never be used
                          `docroutectl type FILE` shows a file's type and what it conforms to; set the default for a type a handler claims \
                        (`docroutectl handlers` lists them), or install a handler whose Info.plist claims it; --force sets it anyway.
                        """)
                }
                defaults.types[normalized] = handler.bundleIdentifier
            }
            try DefaultCommand.save(defaults, to: store)
            print("\(scheme ? "scheme" : "type") \(normalized) → \(handler.bundleIdentifier)")
            if !scheme, !handler.claims.contains(where: { registry.catalog.conforms(normalized, to: $0.contentType) }) {
                StandardStreams.error("note: \(handler.bundleIdentifier) claims neither \(normalized) nor a type it conforms to; the default only picks among handlers that do")
            }
            guard await DefaultCommand.confirm(defaults, options: options, socket: socket) else { throw ExitCode.failure }
        }
    }

    struct Unset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove the default for TYPE or SCHEME.",
            discussion: """
                Then docrouted picks among the handlers that claim it as it does without a default: \
                the one claiming the most specific type, then by LSHandlerRank and role (docroutectl \
                route shows which). docrouted takes the change by itself; the command waits until it \
                has (at most 5 s) and says so.
                """)
        @OptionGroup var options: HandlerOptions
        @Option(help: ArgumentHelp("docrouted's socket, to confirm it took the change (default: $DOCROUTE_SOCKET, else socket of the configuration).", valueName: "path"))
        var socket: String?
        @Argument(help: "The type identifier (public.plain-text) or URL scheme (todolist:) whose default to remove, as default list shows it.")
        var key: String

        func run() async throws {
            let store = AdminDefaultsStore(stateDirectory: try options.stateDirectoryPath())
            var defaults = try options.defaults()
            let trimmed = key.hasSuffix("://") ? String(key.dropLast(3)) : key.hasSuffix(":") ? String(key.dropLast()) : key
            let removed = defaults.types.removeValue(forKey: trimmed.lowercased()) ?? defaults.schemes.removeValue(forKey: trimmed.lowercased())
            guard removed != nil else { throw CtlError("no default is set for '\(key)'; `docroutectl default list` shows them") }
            try DefaultCommand.save(defaults, to: store)
            print("removed the default for \(trimmed)")
            guard await DefaultCommand.confirm(defaults, options: options, socket: socket) else { throw ExitCode.failure }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the defaults.")
        @OptionGroup var options: HandlerOptions
        @Flag(help: "Print them as one JSON object: {\"types\": {TYPE: BUNDLE_ID}, \"schemes\": {SCHEME: BUNDLE_ID}}.")
        var json = false

        func run() throws {
            let defaults = try options.defaults()
            if json {
                try JSONOutput.print(["types": defaults.types, "schemes": defaults.schemes])
                return
            }
            for (type, bundle) in defaults.types.sorted(by: { $0.key < $1.key }) { print("type    \(type) → \(bundle)") }
            for (scheme, bundle) in defaults.schemes.sorted(by: { $0.key < $1.key }) { print("scheme  \(scheme): → \(bundle)") }
            if defaults.types.isEmpty && defaults.schemes.isEmpty { print("no defaults set") }
        }
    }
}
