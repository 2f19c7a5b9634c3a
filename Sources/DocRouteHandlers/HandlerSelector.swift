import DocRouteTypes

/// Chooses the handler for a typed document or a URL scheme.
///
/// 1. An administrator's default for the document's type, or for the nearest type in its conformance
///    chain that has one, wins whenever its handler can open the document at all: it claims the
///    type or a type the document conforms to (`public.data` included), as a Mac's "Always Open
///    With" does. A default whose handler cannot open the document is passed over (and
///    ``select(contentType:innerContentType:)`` says why); only the nearest default counts.
/// 2. Otherwise walk the conformance chain from the most specific type up; the first type any
///    handler claims decides the candidates. For a compound file, a handler that also claims the
///    inner type (or one of its parents) beats one that claims only the outer.
/// 3. Among the handlers claiming that type: `LSHandlerRank` Owner > Default (also when none is
///    given) > Alternate (`None` never opens); then `CFBundleTypeRole` Editor > Viewer > Shell
///    (`None` never opens); then the bundle identifier, so the choice never depends on file-system
///    listing order.
///
/// Exporting a type's declaration plays no part: it decides what the type is (its tags and
/// parents), not who opens it, as with Launch Services.
///
/// URL schemes compare case-insensitively: the administrator's default, else bundle identifier order.
public struct HandlerSelector: Sendable {
    public let registry: HandlerRegistry
    public let defaults: AdminDefaults
    /// The slow path's winners by content type (and inner type): a dynamic type, an inner type or
    /// an administrator's default sends every file of that type down it, and it costs more than
    /// typing the file. The choice depends only on the type and on this selector's registry and
    /// defaults, which a reload replaces together with the selector.
    private let slowChoices = BoundedMemo<Int?>()

    public init(registry: HandlerRegistry, defaults: AdminDefaults = AdminDefaults()) {
        self.registry = registry
        self.defaults = defaults
    }

    /// The winner only: the hot path of delivery. For a declared type it walks catalog handles,
    /// so it hashes no strings and allocates nothing; the result is the same as ``select(contentType:innerContentType:)``.
    public func chooseHandler(contentType: String, innerContentType: String? = nil) -> RegisteredHandler? {
        let catalog = registry.catalog
        guard innerContentType == nil, defaults.types.isEmpty, let index = catalog.typeIndex(of: contentType) else {
            let key = innerContentType.map { "\(contentType)\u{0}\($0)" } ?? contentType
            let chosen = slowChoices.value(for: key) {
                slowChoiceIndex(contentType: contentType, innerContentType: innerContentType)
            }
            return chosen.map { registry.handlers[$0] }
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

    /// The index in the registry's handlers of the winner, by the full rules.
    func slowChoiceIndex(contentType: String, innerContentType: String?) -> Int? {
        let chain = registry.catalog.conformanceChain(of: contentType)
        if let chosen = applicableDefault(chain: chain)?.claim { return chosen.reference.handler }
        guard let (level, references) = decisiveLevel(for: contentType) else { return nil }
        let innerChain = innerContentType.map { registry.catalog.conformanceChain(of: $0) }
        var best: (key: SortKey, handler: Int)?
        for reference in references {
            let key = sortKey(reference, chain: chain, level: level, innerChain: innerChain)
            if best == nil || key < best!.key { best = (key, reference.handler) }
        }
        return best?.handler
    }

    /// The full explanation used by `docroutectl route`.
    public func select(contentType: String, innerContentType: String? = nil) -> HandlerSelection {
        let catalog = registry.catalog
        let chain = catalog.conformanceChain(of: contentType)
        let innerChain = innerContentType.map { catalog.conformanceChain(of: $0) }
        let applicable = applicableDefault(chain: chain)
        var ranked: [HandlerCandidate] = []
        var level = 0
        if let (decisive, references) = decisiveLevel(for: contentType) {
            level = decisive
            ranked = references
                .map { (key: sortKey($0, chain: chain, level: decisive, innerChain: innerChain), reference: $0) }
                .sorted { $0.key < $1.key }
                .map { candidate($0.reference, matchedType: chain[decisive], key: $0.key) }
        }
        if let applicable, let claim = applicable.claim {
            let key = sortKey(claim.reference, chain: chain, level: claim.level, innerChain: innerChain)
            var winner = candidate(claim.reference, matchedType: chain[claim.level], key: key)
            winner.isAdminDefault = true
            let others = ranked.filter { $0.bundleIdentifier != winner.bundleIdentifier }
            var reason = "\(winner.bundleIdentifier) is the administrator's default for \(applicable.type)"
            if applicable.level > 0 { reason += ", the nearest type \(chain[0]) conforms to that has one" }
            reason += claim.level == 0
                ? ", and it claims \(chain[0]) itself"
                : ", and it can open it: it claims \(chain[claim.level]), a type \(chain[0]) conforms to"
            if let first = ranked.first, first.bundleIdentifier != winner.bundleIdentifier {
                reason += "; without the default \(first.bundleIdentifier) would have been chosen"
            }
            return HandlerSelection(
                input: contentType, bundleIdentifier: winner.bundleIdentifier, candidates: [winner] + others, reason: reason,
                adminDefault: AdminDefaultDecision(key: applicable.type, bundleIdentifier: applicable.bundleIdentifier, decided: true))
        }
        let passedOver = applicable.map {
            AdminDefaultDecision(key: $0.type, bundleIdentifier: $0.bundleIdentifier, decided: false,
                                 passedOverReason: passedOverReason($0, chain: chain))
        }
        let passedOverNote = passedOver.map {
            "; the administrator's default for \($0.key), \($0.bundleIdentifier), was passed over: \($0.passedOverReason ?? "")"
        } ?? ""
        guard let winner = ranked.first else {
            return HandlerSelection(
                input: contentType, bundleIdentifier: nil, candidates: [],
                reason: "no handler claims \(contentType) or any type it conforms to (\(chain.dropFirst().prefix(4).joined(separator: ", "))…)" + passedOverNote,
                adminDefault: passedOver)
        }
        var reason = level == 0
            ? "\(winner.bundleIdentifier) claims \(chain[0]) itself"
            : "\(winner.bundleIdentifier) claims \(chain[level]), the most specific claimed type \(chain[0]) conforms to"
        if ranked.count > 1 {
            let runnerUp = ranked[1]
            reason += "; ahead of \(runnerUp.bundleIdentifier) because " + Self.tieBreak(winner, runnerUp, innerContentType: innerContentType)
        }
        return HandlerSelection(input: contentType, bundleIdentifier: winner.bundleIdentifier, candidates: ranked,
                                reason: reason + passedOverNote, adminDefault: passedOver)
    }

    /// A candidate as `select` and Open In… list it; ``HandlerCandidate/isAdminDefault`` is set by the caller.
    func candidate(_ reference: HandlerRegistry.ClaimReference, matchedType: String, key: SortKey) -> HandlerCandidate {
        HandlerCandidate(
            bundleIdentifier: registry.handlers[reference.handler].bundleIdentifier,
            matchedType: matchedType, rank: reference.rank, role: reference.role,
            isAdminDefault: false, claimsInnerType: key.inner < Int.max)
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
        var rank: Int
        var role: Int
        var bundleIdentifier: String

        static func < (lhs: SortKey, rhs: SortKey) -> Bool {
            (lhs.inner, lhs.rank, lhs.role, lhs.bundleIdentifier) < (rhs.inner, rhs.rank, rhs.role, rhs.bundleIdentifier)
        }
    }

    /// The administrator's default that applies to a document with this conformance chain: the one
    /// set for the nearest type that has one, with its handler's most specific claim in the chain
    /// (`claim`) when it can open the document at all.
    struct ApplicableDefault {
        /// The type the default is set for, and its place in the chain.
        var type: String
        var level: Int
        var bundleIdentifier: String
        var claim: (reference: HandlerRegistry.ClaimReference, level: Int)?
    }

    func applicableDefault(chain: [String]) -> ApplicableDefault? {
        guard !defaults.types.isEmpty else { return nil }
        for (level, type) in chain.enumerated() {
            guard let bundle = defaults.handler(forType: type) else { continue }
            var result = ApplicableDefault(type: type, level: level, bundleIdentifier: bundle)
            if let index = registry.indexByBundleIdentifier[bundle.lowercased()] {
                for (claimLevel, claimed) in chain.enumerated() {
                    if let reference = registry.claimsByType[claimed.lowercased()]?.first(where: { $0.handler == index }) {
                        result.claim = (reference, claimLevel)
                        break
                    }
                }
            }
            return result
        }
        return nil
    }

    /// Why a default's handler cannot open a document with this conformance chain.
    func passedOverReason(_ applicable: ApplicableDefault, chain: [String]) -> String {
        guard let handler = registry.handler(for: applicable.bundleIdentifier) else {
            return "\(applicable.bundleIdentifier) is not a loaded handler (docroutectl handlers says why)"
        }
        let lowered = Set(chain.map { $0.lowercased() })
        if let never = handler.claims.first(where: { lowered.contains($0.contentType.lowercased()) }) {
            return "it claims \(never.contentType) only with LSHandlerRank \(never.rank.rawValue) and role \(never.role.rawValue), so it never opens it"
        }
        let claimed = handler.claims.map(\.contentType)
        return "it claims neither \(chain[0]) nor any type it conforms to"
            + (claimed.isEmpty ? " (it claims no type)" : " (it claims \(claimed.prefix(5).joined(separator: ", "))\(claimed.count > 5 ? ", …" : ""))")
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
        return SortKey(
            inner: inner, rank: reference.rank.strength,
            role: reference.role.preference,
            bundleIdentifier: handler.bundleIdentifier)
    }

    static func tieBreak(_ winner: HandlerCandidate, _ other: HandlerCandidate, innerContentType: String?) -> String {
        if winner.claimsInnerType && !other.claimsInnerType, let innerContentType {
            return "it also claims the inner type \(innerContentType)"
        }
        if winner.rank != other.rank { return "rank \(winner.rank.rawValue) beats \(other.rank.rawValue)" }
        if winner.role != other.role { return "role \(winner.role.rawValue) beats \(other.role.rawValue)" }
        return "of bundle identifier order (all else equal)"
    }
}
