import DocRouteTypes

/// Chooses the handler for a typed document or a URL scheme.
///
/// 1. Walk the conformance chain from the most specific type up; the first type any handler claims
///    decides the candidates. For a compound file, a handler that also claims the inner type (or one
///    of its parents) beats one that claims only the outer.
/// 2. Among the handlers claiming that type: an administrator's default for it wins; then
///    `LSHandlerRank` Owner > Default (also when none is given) > Alternate (`None` never opens); then
///    `CFBundleTypeRole` Editor > Viewer > Shell (`None` never opens); then the bundle identifier,
///    so the choice never depends on file-system listing order.
///
/// Exporting a type's declaration plays no part: it decides what the type is (its tags and
/// parents), not who opens it, as with Launch Services.
///
/// URL schemes compare case-insensitively: the administrator's default, else bundle identifier order.
public struct HandlerSelector: Sendable {
    public let registry: HandlerRegistry
    public let defaults: AdminDefaults

    public init(registry: HandlerRegistry, defaults: AdminDefaults = AdminDefaults()) {
        self.registry = registry
        self.defaults = defaults
    }

    /// The winner only: the hot path of delivery. For a declared type it walks catalog handles,
    /// so it hashes no strings and allocates nothing; the result is the same as ``select(contentType:innerContentType:)``.
    public func chooseHandler(contentType: String, innerContentType: String? = nil) -> RegisteredHandler? {
        let catalog = registry.catalog
        guard innerContentType == nil, defaults.types.isEmpty, let index = catalog.typeIndex(of: contentType) else {
            return slowChoice(contentType: contentType, innerContentType: innerContentType)
        }
        var references = registry.claimsByTypeIndex[index]
        if references.isEmpty {
            for ancestor in catalog.ancestorIndexes(ofTypeAt: index) where !registry.claimsByTypeIndex[ancestor].isEmpty {
                references = registry.claimsByTypeIndex[ancestor]
                break
            }
        }
        guard var best = references.first else { return nil }
        for reference in references.dropFirst() where Self.precedes(reference, best, handlers: registry.handlers) {
            best = reference
        }
        return registry.handlers[best.handler]
    }

    /// Rank, then role, then bundle identifier: the order without defaults or inner types.
    static func precedes(_ lhs: HandlerRegistry.ClaimReference, _ rhs: HandlerRegistry.ClaimReference, handlers: [RegisteredHandler]) -> Bool {
        if lhs.rank.strength != rhs.rank.strength { return lhs.rank.strength < rhs.rank.strength }
        if lhs.role.preference != rhs.role.preference { return lhs.role.preference < rhs.role.preference }
        return handlers[lhs.handler].bundleIdentifier < handlers[rhs.handler].bundleIdentifier
    }

    func slowChoice(contentType: String, innerContentType: String?) -> RegisteredHandler? {
        guard let (level, references) = decisiveLevel(for: contentType) else { return nil }
        let chain = registry.catalog.conformanceChain(of: contentType)
        let innerChain = innerContentType.map { registry.catalog.conformanceChain(of: $0) }
        var best: (key: SortKey, handler: Int)?
        for reference in references {
            let key = sortKey(reference, chain: chain, level: level, innerChain: innerChain)
            if best == nil || key < best!.key { best = (key, reference.handler) }
        }
        return best.map { registry.handlers[$0.handler] }
    }

    /// The full explanation used by `docroutectl route`.
    public func select(contentType: String, innerContentType: String? = nil) -> HandlerSelection {
        let catalog = registry.catalog
        let chain = catalog.conformanceChain(of: contentType)
        guard let (level, references) = decisiveLevel(for: contentType) else {
            return HandlerSelection(
                input: contentType, bundleIdentifier: nil, candidates: [],
                reason: "no handler claims \(contentType) or any type it conforms to (\(chain.dropFirst().prefix(4).joined(separator: ", "))…)")
        }
        let innerChain = innerContentType.map { catalog.conformanceChain(of: $0) }
        let ranked = references
            .map { (key: sortKey($0, chain: chain, level: level, innerChain: innerChain), reference: $0) }
            .sorted { $0.key < $1.key }
        let candidates = ranked.map { item in
            HandlerCandidate(
                bundleIdentifier: registry.handlers[item.reference.handler].bundleIdentifier,
                matchedType: chain[level], rank: item.reference.rank, role: item.reference.role,
                isAdminDefault: item.key.adminDefault == 0, claimsInnerType: item.key.inner < Int.max)
        }
        let winner = candidates[0]
        var reason = level == 0
            ? "\(winner.bundleIdentifier) claims \(chain[0]) itself"
            : "\(winner.bundleIdentifier) claims \(chain[level]), the most specific claimed type \(chain[0]) conforms to"
        if candidates.count > 1 {
            let runnerUp = candidates[1]
            reason += "; ahead of \(runnerUp.bundleIdentifier) because " + Self.tieBreak(winner, runnerUp, innerContentType: innerContentType)
        }
        return HandlerSelection(input: contentType, bundleIdentifier: winner.bundleIdentifier, candidates: candidates, reason: reason)
    }

    /// Chooses the handler for a URL scheme.
    public func select(scheme: String) -> HandlerSelection {
        let key = scheme.lowercased()
        let indexes = registry.handlersByScheme[key] ?? []
        guard !indexes.isEmpty else {
            return HandlerSelection(input: key, bundleIdentifier: nil, candidates: [], reason: "no handler claims the URL scheme '\(key)'")
        }
        let preferred = defaults.handler(forScheme: key)?.lowercased()
        let candidates = indexes.map { index -> HandlerCandidate in
            let handler = registry.handlers[index]
            return HandlerCandidate(
                bundleIdentifier: handler.bundleIdentifier, matchedType: key, rank: .default, role: .viewer,
                isAdminDefault: handler.bundleIdentifier.lowercased() == preferred, claimsInnerType: false)
        }.sorted { ($0.isAdminDefault ? 0 : 1, $0.bundleIdentifier) < ($1.isAdminDefault ? 0 : 1, $1.bundleIdentifier) }
        let winner = candidates[0]
        var reason = "\(winner.bundleIdentifier) claims the URL scheme '\(key)'"
        if candidates.count > 1 {
            reason += winner.isAdminDefault ? "; the administrator's default" : "; first by bundle identifier among \(candidates.count)"
        }
        return HandlerSelection(input: key, bundleIdentifier: winner.bundleIdentifier, candidates: candidates, reason: reason)
    }

    struct SortKey: Comparable {
        var inner: Int
        var adminDefault: Int
        var rank: Int
        var role: Int
        var bundleIdentifier: String

        static func < (lhs: SortKey, rhs: SortKey) -> Bool {
            (lhs.inner, lhs.adminDefault, lhs.rank, lhs.role, lhs.bundleIdentifier)
                < (rhs.inner, rhs.adminDefault, rhs.rank, rhs.role, rhs.bundleIdentifier)
        }
    }

    func decisiveLevel(for contentType: String) -> (Int, [HandlerRegistry.ClaimReference])? {
        let chain = registry.catalog.conformanceChain(of: contentType)
        for (level, type) in chain.enumerated() {
            if let references = registry.claimsByType[type.lowercased()], !references.isEmpty { return (level, references) }
        }
        return nil
    }

    func sortKey(_ reference: HandlerRegistry.ClaimReference, chain: [String], level: Int, innerChain: [String]?) -> SortKey {
        let handler = registry.handlers[reference.handler]
        var inner = Int.max
        if let innerChain {
            // How specific the handler's claim on the inner type is: the exact inner type scores 0.
            for (position, type) in innerChain.enumerated() where position < inner {
                if registry.claimsByType[type.lowercased()]?.contains(where: { $0.handler == reference.handler }) == true {
                    inner = position
                    break
                }
            }
        }
        var adminDefault = 1
        if !defaults.types.isEmpty {
            let bundle = handler.bundleIdentifier.lowercased()
            for type in chain[...level] where defaults.handler(forType: type)?.lowercased() == bundle {
                adminDefault = 0
                break
            }
        }
        return SortKey(
            inner: inner, adminDefault: adminDefault, rank: reference.rank.strength,
            role: reference.role.preference,
            bundleIdentifier: handler.bundleIdentifier)
    }

    static func tieBreak(_ winner: HandlerCandidate, _ other: HandlerCandidate, innerContentType: String?) -> String {
        if winner.claimsInnerType && !other.claimsInnerType, let innerContentType {
            return "it also claims the inner type \(innerContentType)"
        }
        if winner.isAdminDefault && !other.isAdminDefault { return "it is the administrator's default" }
        if winner.rank != other.rank { return "rank \(winner.rank.rawValue) beats \(other.rank.rawValue)" }
        if winner.role != other.role { return "role \(winner.role.rawValue) beats \(other.role.rawValue)" }
        return "of bundle identifier order (all else equal)"
    }
}
