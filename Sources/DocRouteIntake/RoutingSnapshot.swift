import DocRouteConfiguration
import DocRoutePlatform
import DocRouteHandlers
import DocRouteTypes

/// The handlers, the administrator's defaults and the type engine of one moment, with what each
/// handler's copies need: taken whole by each batch, replaced whole by a reload.
///
/// It is intake's own type: the daemon builds one at start and at each reload, and intake, the
/// Maildir intake and `open` route with it through ``route(_:name:pick:)``, the one path from a file to
/// a handler.
package struct RoutingSnapshot: Sendable {
    package var registry: HandlerRegistry
    package var selector: HandlerSelector
    package var engine: TypeEngine
    package var defaults: AdminDefaults
    /// Where a handler without a `DocRouteContainer` gets its container: `<this>/<bundle id>`.
    package var containersDirectory: String
    /// The owner of each handler's copies (``HandlerAccount/copyOwner(for:)``), by bundle
    /// identifier, resolved when the snapshot is made; a handler missing here keeps docrouted's.
    package var owners: [String: (uid: UInt32, gid: UInt32)]
    /// Why each type goes where it goes, worked out on first use (see ``routeReason(_:handler:)``).
    let routeReasons = RouteReasons()

    /// A snapshot of `registry` and `defaults`; looks up each handler's user once.
    package init(registry: HandlerRegistry, defaults: AdminDefaults, mimeDatabase: MIMEDatabase, containersDirectory: String) {
        self.registry = registry
        self.selector = HandlerSelector(registry: registry, defaults: defaults)
        self.engine = TypeEngine(catalog: registry.catalog, mimeDatabase: mimeDatabase)
        self.defaults = defaults
        self.containersDirectory = containersDirectory
        var owners: [String: (uid: UInt32, gid: UInt32)] = [:]
        for handler in registry.handlers {
            owners[handler.bundleIdentifier] = HandlerAccount.copyOwner(for: handler.manifest.user)
        }
        self.owners = owners
    }

    /// The handler's container root.
    package func containerRoot(of handler: RegisteredHandler) -> String {
        handler.manifest.container ?? containersDirectory + "/" + handler.bundleIdentifier
    }

    /// The owner the handler's copies get, nil to keep docrouted's.
    package func copyOwner(of handler: RegisteredHandler) -> (uid: UInt32, gid: UInt32)? {
        owners[handler.bundleIdentifier]
    }

    /// Why a file has no handler.
    package enum Refusal: Error {
        /// No handler claims the type (or a type it conforms to).
        case noHandler
        /// The handler asked for (Open In…) is not among those that can open it, which are listed.
        case notACandidate([HandlerCandidate])
    }

    /// The route of one file: its type, and the handler it goes to.
    package struct Route {
        package var classification: TypeClassification
        package var handler: Result<RegisteredHandler, Refusal>
    }

    /// Types a file by its name and first bytes and picks its handler: the best by selection
    /// order, or, for Open In…, the one asked for when it is among the candidates.
    package func route(head: [UInt8], name: String?, mimeHint: String? = nil, pick: String? = nil) -> Route {
        let classification = engine.classify(filename: name, head: head, mimeHint: mimeHint)
        return Route(classification: classification, handler: handler(for: classification, pick: pick))
    }

    /// The handler for a typed document (see ``route(head:name:mimeHint:pick:)``).
    package func handler(for classification: TypeClassification, pick: String? = nil) -> Result<RegisteredHandler, Refusal> {
        if let pick {
            let candidates = selector.openInCandidates(contentType: classification.contentType, innerContentType: classification.innerContentType)
            guard let chosen = candidates.first(where: { $0.bundleIdentifier.lowercased() == pick.lowercased() }),
                  let handler = registry.handler(for: chosen.bundleIdentifier)
            else { return .failure(.notACandidate(candidates)) }
            return .success(handler)
        }
        guard let handler = selector.chooseHandler(contentType: classification.contentType, innerContentType: classification.innerContentType) else {
            return .failure(.noHandler)
        }
        return .success(handler)
    }

    /// The delivery of `file` to `handler`: everything but what the delivery adds itself.
    package func delivery(
        of file: IntakeFile, to handler: RegisteredHandler, classification: TypeClassification,
        sourceFolder: DirectoryHandle?, sourceName: [UInt8], sourcePath: String, mailbox: String, sourceApplication: String
    ) -> DocumentDelivery {
        DocumentDelivery(
            source: file, sourceFolder: sourceFolder, sourceName: sourceName, sourcePath: sourcePath,
            containerRoot: containerRoot(of: handler), mailbox: mailbox, extensionChain: classification.extensionChain,
            contentType: classification.contentType, bundleIdentifier: handler.bundleIdentifier,
            owner: copyOwner(of: handler), sourceApplication: sourceApplication,
            // mailbox, originalFilename and size are added by the delivery itself.
            annotation: [:], mimeType: classification.mimeType, typedBy: classification.decidedBy.rawValue,
            routedBy: routeReason(classification, handler: handler.bundleIdentifier))
    }

    /// Why a document of this type goes to `handler`, for its history, in a few words (`default`,
    /// `rank Owner`, `role Editor`, `only handler`…; `docroutectl route` gives the whole
    /// explanation): worked out once per type and snapshot, as every document of a type goes the
    /// same way until the next reload. The words are kept short: they are written with every row.
    func routeReason(_ classification: TypeClassification, handler: String) -> String {
        let (winner, reason) = routeReasons.reason(classification.contentType, classification.innerContentType) {
            let selection = selector.select(contentType: classification.contentType, innerContentType: classification.innerContentType)
            return (selection.bundleIdentifier, Self.shortReason(selection))
        }
        return winner == handler ? reason : "Open In…"
    }

    /// What decided a selection, as ``HandlerSelector``'s tie-break does, in a few words.
    static func shortReason(_ selection: HandlerSelection) -> String {
        guard let winner = selection.candidates.first else { return "no handler" }
        guard selection.candidates.count > 1 else { return winner.isAdminDefault ? "default" : "only handler" }
        let other = selection.candidates[1]
        if winner.claimsInnerType && !other.claimsInnerType { return "inner type" }
        if winner.isAdminDefault && !other.isAdminDefault { return "default" }
        if winner.rank != other.rank { return "rank \(winner.rank.rawValue)" }
        if winner.role != other.role { return "role \(winner.role.rawValue)" }
        return "name order"
    }
}
