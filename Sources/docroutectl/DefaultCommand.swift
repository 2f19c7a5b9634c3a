import ArgumentParser
import DocRouteHandlers
import Foundation

struct DefaultCommand: ParsableCommand {
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

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make BUNDLE_ID the default for TYPE or SCHEME (write a scheme as 'todolist:').")
        @OptionGroup var options: HandlerOptions
        @Argument(help: "A type identifier (public.plain-text) or a URL scheme (todolist:).") var key: String
        @Argument(help: "The handler's bundle identifier.") var bundleIdentifier: String

        func run() throws {
            let registry = try options.registry()
            guard let handler = registry.handler(for: bundleIdentifier) else {
                throw ValidationError("no registered handler is '\(bundleIdentifier)'; see docroutectl handlers")
            }
            let store = AdminDefaultsStore(stateDirectory: try options.stateDirectoryPath())
            var defaults = try options.defaults()
            let (scheme, normalized) = DefaultCommand.isScheme(key, registry: registry)
            if scheme {
                defaults.schemes[normalized] = handler.bundleIdentifier
            } else {
                defaults.types[normalized] = handler.bundleIdentifier
            }
            try store.save(defaults)
            print("\(scheme ? "scheme" : "type") \(normalized) → \(handler.bundleIdentifier)")
        }
    }

    struct Unset: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove the default for TYPE or SCHEME.")
        @OptionGroup var options: HandlerOptions
        @Argument var key: String

        func run() throws {
            let store = AdminDefaultsStore(stateDirectory: try options.stateDirectoryPath())
            var defaults = try options.defaults()
            let trimmed = key.hasSuffix("://") ? String(key.dropLast(3)) : key.hasSuffix(":") ? String(key.dropLast()) : key
            let removed = defaults.types.removeValue(forKey: trimmed.lowercased()) ?? defaults.schemes.removeValue(forKey: trimmed.lowercased())
            guard removed != nil else { throw ValidationError("no default is set for '\(key)'") }
            try store.save(defaults)
            print("removed the default for \(trimmed)")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the defaults.")
        @OptionGroup var options: HandlerOptions
        @Flag var json = false

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
