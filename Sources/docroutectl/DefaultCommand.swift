import ArgumentParser
import DocRouteConfiguration
import DocRouteHandlers
import DocRouteTypes
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
        discussion: """
            A type's default decides for documents of that type, and of every type conforming to it \
            that has no nearer default, whenever its handler can open the document at all; \
            docroutectl route says when it decided, or why it was passed over.
            """,
        subcommands: [Set.self, Unset.self, List.self])

    /// What a `default` key names: a URL scheme, or a type given as a UTI, a file name extension
    /// or a MIME type (the last two mapped to the UTI the type catalog prefers for them).
    enum Key: Equatable {
        case scheme(String)
        /// The lower-cased UTI, and how it was written when that was not as a UTI ("the extension .pdf").
        case type(String, from: String?)
    }

    /// A URL scheme is written with a trailing ':' or '://', or is a scheme some handler claims
    /// that is not a type; a key with '/' is a MIME type; one starting with '.', or one without a
    /// dot that the catalog knows as an extension and not as a type, is a file name extension.
    static func resolve(_ key: String, registry: HandlerRegistry) -> Key {
        if key.hasSuffix("://") { return .scheme(String(key.dropLast(3)).lowercased()) }
        if key.hasSuffix(":") { return .scheme(String(key.dropLast()).lowercased()) }
        let catalog = registry.catalog
        if key.contains("/") {
            let type = catalog.preferredType(forMIMEType: key)
                ?? DynamicTypeIdentifier(tagClass: .mimeType, tag: TypeCatalog.normalizedMIMEType(key)).identifier
            return .type(type.lowercased(), from: "the MIME type \(key)")
        }
        if key.hasPrefix(".") || (!key.contains(".") && !catalog.contains(key) && catalog.preferredType(forFilenameExtension: key) != nil) {
            let tag = key.hasPrefix(".") ? String(key.dropFirst()) : key
            let type = catalog.preferredType(forFilenameExtension: tag)
                ?? DynamicTypeIdentifier(tagClass: .filenameExtension, tag: tag.lowercased()).identifier
            return .type(type.lowercased(), from: "the extension .\(tag)")
        }
        let claimed = registry.handlers.contains { $0.manifest.schemes.contains(key.lowercased()) }
        if claimed && !catalog.contains(key) { return .scheme(key.lowercased()) }
        return .type(key.lowercased(), from: nil)
    }

    /// The handlers that could open documents of `type` (the Open In… candidates, without any
    /// default): those a default for it may name.
    static func candidates(forType type: String, registry: HandlerRegistry) -> [HandlerCandidate] {
        HandlerSelector(registry: registry).openInCandidates(contentType: type)
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make BUNDLE_ID the default for TYPE or SCHEME (write a scheme as 'todolist:').",
            discussion: """
                TYPE is a UTI (com.adobe.pdf), a file name extension (pdf or .pdf) or a MIME type \
                (application/pdf); the command says which UTI it set. The default decides for documents \
                of that type and of every type conforming to it that has no nearer default, whenever \
                the handler can open the document at all: it claims the type or a type the document \
                conforms to (public.data included). A handler that could never open documents of the \
                type is refused, and the handlers that could are listed; so is a handler that does not \
                claim the scheme. A type that no handler claims and the type catalog does not know \
                (a typing mistake, or a dyn. type) is refused, as is a scheme no handler claims, unless \
                --force. docrouted takes the change by itself; the command waits until it has (at most \
                5 s) and says so.
                """)
        @OptionGroup var options: HandlerOptions
        @Option(help: ArgumentHelp("docrouted's socket, to confirm it took the change (default: $DOCROUTE_SOCKET, else socket of the configuration).", valueName: "path"))
        var socket: String?
        @Flag(help: "Set it even for a type or scheme that no handler claims and the catalog does not know.")
        var force = false
        @Argument(help: "A type identifier (public.plain-text), a file name extension (pdf), a MIME type (application/pdf) or a URL scheme (todolist:).") var key: String
        @Argument(help: "The handler's bundle identifier.") var bundleIdentifier: String

        func run() async throws {
            let registry = try options.registry()
            guard let handler = registry.handler(for: bundleIdentifier) else {
                throw CtlError("no registered handler is '\(bundleIdentifier)' in \(try options.handlersDirectory()); `docroutectl handlers` lists them")
            }
            let store = AdminDefaultsStore(stateDirectory: try options.stateDirectoryPath())
            var defaults = try options.defaults()
            switch DefaultCommand.resolve(key, registry: registry) {
            case .scheme(let scheme):
                let claimers = registry.handlers.filter { $0.manifest.schemes.contains(scheme) }.map(\.bundleIdentifier)
                guard !claimers.isEmpty || force else {
                    throw CtlError("no handler claims the URL scheme \(scheme): (CFBundleURLSchemes), so a default for it would never be used; install a handler that claims it, or pass --force")
                }
                // A scheme's default only picks among the handlers that claim it.
                guard claimers.isEmpty || claimers.contains(handler.bundleIdentifier) else {
                    throw CtlError("""
                        \(handler.bundleIdentifier) does not claim the URL scheme \(scheme): (its CFBundleURLTypes), so it can never open such a URL; nothing was changed
                          the handlers that could: \(claimers.sorted().joined(separator: ", "))
                        """)
                }
                defaults.schemes[scheme] = handler.bundleIdentifier
                try DefaultCommand.save(defaults, to: store)
                print("scheme \(scheme) → \(handler.bundleIdentifier)")
            case .type(let type, let origin):
                let known = registry.catalog.contains(type)
                let claimed = registry.handlers.contains { $0.claims.contains { $0.contentType.lowercased() == type } }
                guard claimed || known || force else {
                    throw CtlError("""
                        no handler claims \(key)\(origin == nil ? "" : " (\(type))") and the type catalog does not know it, so a default for it would never be used
                          `docroutectl type FILE` shows a file's type and what it conforms to; set the default for a type a handler claims \
                        (`docroutectl handlers` lists them), or install a handler whose Info.plist claims it; --force sets it anyway.
                        """)
                }
                let candidates = DefaultCommand.candidates(forType: type, registry: registry)
                // --force is for a type not declared yet, whose handlers cannot be told; a known
                // type's default that could never decide would say "taken" and change nothing.
                guard candidates.contains(where: { $0.bundleIdentifier == handler.bundleIdentifier }) || (force && !known && !claimed) else {
                    let name = registry.catalog.canonicalIdentifier(type)
                    throw CtlError("""
                        \(handler.bundleIdentifier) cannot open \(name)\(origin.map { " (\($0))" } ?? ""): it claims neither \(name) nor any type \(name) conforms to, \
                        so as its default it would never be chosen; nothing was changed
                          \(candidates.isEmpty ? "no handler can open it" : "the handlers that could: " + candidates.map { "\($0.bundleIdentifier) (via \($0.matchedType))" }.joined(separator: ", "))
                        """)
                }
                defaults.types[type] = handler.bundleIdentifier
                try DefaultCommand.save(defaults, to: store)
                print("type \(type)\(origin.map { " (from \($0))" } ?? "") → \(handler.bundleIdentifier)")
            }
            guard await DefaultCommand.confirm(defaults, options: options, socket: socket) else { throw ExitCode.failure }
        }
    }

    struct Unset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove the default for TYPE (a UTI, a file name extension or a MIME type) or SCHEME.",
            discussion: """
                Then docrouted picks among the handlers that claim it as it does without a default: \
                the one claiming the most specific type, then by LSHandlerRank and role (docroutectl \
                route shows which). docrouted takes the change by itself; the command waits until it \
                has (at most 5 s) and says so.
                """)
        @OptionGroup var options: HandlerOptions
        @Option(help: ArgumentHelp("docrouted's socket, to confirm it took the change (default: $DOCROUTE_SOCKET, else socket of the configuration).", valueName: "path"))
        var socket: String?
        @Argument(help: "The type identifier (public.plain-text), file name extension (pdf), MIME type (application/pdf) or URL scheme (todolist:) whose default to remove.")
        var key: String

        func run() async throws {
            let store = AdminDefaultsStore(stateDirectory: try options.stateDirectoryPath())
            var defaults = try options.defaults()
            var trimmed = key.hasSuffix("://") ? String(key.dropLast(3)) : key.hasSuffix(":") ? String(key.dropLast()) : key
            // An extension or MIME type names the UTI `default set` stored for it.
            if defaults.types[trimmed.lowercased()] == nil, defaults.schemes[trimmed.lowercased()] == nil,
               let registry = try? options.registry(), case .type(let type, _?) = DefaultCommand.resolve(key, registry: registry) {
                trimmed = type
            }
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
