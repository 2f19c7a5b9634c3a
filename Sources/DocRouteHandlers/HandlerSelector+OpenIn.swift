import DocRouteTypes

extension HandlerSelector {
    /// Every handler that could open a document of this type, best first: Mail's "Open In…" list.
    ///
    /// A handler is a candidate when it claims the type or any type the document conforms to, at
    /// any rank but `None`. The administrator's default that applies comes first when it is a
    /// candidate (it is then the handler `open` picks); then the handlers of the most specific
    /// claimed type, in exactly
    /// the order ``select(contentType:innerContentType:)`` ranks them (so the first one is the
    /// handler `open` picks); then those claiming only a more general type, level by level, each
    /// level in the same order. A handler appears once, at its most specific claim.
    public func openInCandidates(contentType: String, innerContentType: String? = nil) -> [HandlerCandidate] {
        let chain = registry.catalog.conformanceChain(of: contentType)
        let innerChain = innerContentType.map { registry.catalog.conformanceChain(of: $0) }
        var seen: Set<Int> = []
        var result: [HandlerCandidate] = []
        if let claim = applicableDefault(chain: chain)?.claim {
            var first = candidate(claim.reference, matchedType: chain[claim.level],
                                  key: sortKey(claim.reference, chain: chain, level: claim.level, innerChain: innerChain))
            first.isAdminDefault = true
            result.append(first)
            seen.insert(claim.reference.handler)
        }
        for (level, type) in chain.enumerated() {
            guard let references = registry.claimsByType[type.lowercased()], !references.isEmpty else { continue }
            let ranked = references
                .filter { !seen.contains($0.handler) }
                .map { (key: sortKey($0, chain: chain, level: level, innerChain: innerChain), reference: $0) }
                .sorted { $0.key < $1.key }
            for item in ranked {
                seen.insert(item.reference.handler)
                result.append(candidate(item.reference, matchedType: type, key: item.key))
            }
        }
        return result
    }

    /// Every handler claiming the URL scheme, best first (the administrator's default, then
    /// bundle identifier order), as ``select(scheme:)`` ranks them.
    public func openInCandidates(scheme: String) -> [HandlerCandidate] {
        select(scheme: scheme).candidates
    }
}
