extension MIMEDatabase {
    /// The glob rules matching the last path component of `filename`, best first.
    ///
    /// Only the first kind of rule with any match counts: literal names (`Makefile`), then
    /// `*suffix` patterns (`*.tar.gz`), then other fnmatch patterns (`*.so.[0-9]*`). Within
    /// it, matches are ranked by weight, then pattern length, then case-sensitive (`cs`)
    /// before case-insensitive, then directory precedence. Case is folded for ASCII only.
    public func globMatches(filename: String) -> [MIMEGlobMatch] {
        globs.matches(fileName: filename).map { id in
            let entry = globs.entries[Int(id)]
            return MIMEGlobMatch(
                type: entry.type,
                weight: entry.weight,
                pattern: entry.pattern,
                caseSensitive: entry.caseSensitive
            )
        }
    }

    /// The highest-priority magic section matching the leading bytes of a file, if any.
    public func magicMatch(head: [UInt8]) -> MIMEMagicMatch? {
        head.withUnsafeBytes { magicMatch(head: $0) }
    }

    /// The highest-priority magic section matching the leading bytes of a file, if any.
    public func magicMatch(head: UnsafeRawBufferPointer) -> MIMEMagicMatch? {
        magicMatch(head: head, preferring: [])
    }

    /// Detects a file's type the way the shared-mime-info spec recommends.
    ///
    /// 1. Glob match on the name; keep the highest weight, then the longest pattern. If a
    ///    single type is left, it is the answer and the content is not consulted (unless
    ///    ``MIMEDetectionOptions/contentOverridesNameAtPriority`` says otherwise).
    /// 2. Otherwise sniff `head` with the magic rules; at equal priority, a type related to a
    ///    glob candidate is preferred. Without magic, the text/binary heuristic stands in
    ///    (`text/plain` or `application/octet-stream`).
    /// 3. No glob candidate: the magic type, else the fallback. Several candidates: the first
    ///    that is equal to or a subclass of the sniffed type, else the best-ranked candidate.
    ///
    /// - Parameters:
    ///   - filename: A name or path (only the last component is used); `nil` when unknown.
    ///   - head: The file's leading bytes; ``maximumHeadLength`` is the most that matters.
    ///   - options: ``MIMEDetectionOptions/contentOnly`` ignores the name.
    public func detect(
        filename: String?,
        head: [UInt8],
        options: MIMEDetectionOptions = .specification
    ) -> MIMEDetection {
        head.withUnsafeBytes { detect(filename: filename, head: $0, options: options) }
    }

    /// Detects a file's type from bytes the caller already holds, without copying them; same
    /// rules as the `[UInt8]` overload.
    public func detect(
        filename: String?,
        head: UnsafeRawBufferPointer,
        options: MIMEDetectionOptions = .specification
    ) -> MIMEDetection {
        var candidates: [String] = []
        if options.usesFileName, let filename {
            candidates = topGlobTypes(filename: filename)
        }

        if candidates.count == 1 {
            guard let threshold = options.contentOverridesNameAtPriority else {
                return MIMEDetection(mimeType: candidates[0], decidedBy: .glob, globCandidates: candidates)
            }
            let sniffed = magicMatch(head: head, preferring: candidates)
            if let sniffed, sniffed.priority >= threshold,
                !isSubclass(canonicalType: sniffed.type, ofCanonical: candidates[0]),
                !isSubclass(canonicalType: candidates[0], ofCanonical: sniffed.type)
            {
                return MIMEDetection(
                    mimeType: sniffed.type,
                    decidedBy: .magic,
                    globCandidates: candidates,
                    magic: sniffed
                )
            }
            return MIMEDetection(mimeType: candidates[0], decidedBy: .glob, globCandidates: candidates, magic: sniffed)
        }

        let sniffed = magicMatch(head: head, preferring: candidates)
        if candidates.isEmpty {
            if let sniffed {
                return MIMEDetection(mimeType: sniffed.type, decidedBy: .magic, magic: sniffed)
            }
            return MIMETextSniffer.looksLikeText(head)
                ? MIMEDetection(mimeType: Self.plainText, decidedBy: .textFallback)
                : MIMEDetection(mimeType: Self.octetStream, decidedBy: .binaryFallback)
        }

        // Several candidates: let the content pick the one it agrees with.
        let contentType =
            sniffed?.type ?? (MIMETextSniffer.looksLikeText(head) ? Self.plainText : Self.octetStream)
        if let agreeing = candidates.first(where: { isSubclass(canonicalType: $0, ofCanonical: contentType) }) {
            return MIMEDetection(
                mimeType: agreeing,
                decidedBy: sniffed == nil ? .glob : .magic,
                globCandidates: candidates,
                magic: sniffed
            )
        }
        return MIMEDetection(mimeType: candidates[0], decidedBy: .glob, globCandidates: candidates, magic: sniffed)
    }

    /// The distinct types among the best glob matches: highest weight, then longest pattern
    /// (and case-sensitive ones only, if the best match is case-sensitive).
    func topGlobTypes(filename: String) -> [String] {
        let found = globs.matches(fileName: filename)
        guard let bestID = found.first else { return [] }
        let best = globs.entries[Int(bestID)]
        var types = [best.type]
        for id in found.dropFirst() {
            let entry = globs.entries[Int(id)]
            guard entry.weight == best.weight, entry.pattern.utf8.count == best.pattern.utf8.count,
                entry.caseSensitive == best.caseSensitive || !best.caseSensitive
            else { break }
            if !types.contains(entry.type) { types.append(entry.type) }
        }
        return types
    }

    /// Magic sniffing that, among sections of the winning priority, prefers a type equal to a
    /// glob candidate or related to one by subclassing (either way).
    func magicMatch(head: UnsafeRawBufferPointer, preferring candidates: [String]) -> MIMEMagicMatch? {
        let preference: ((String) -> Bool)? =
            candidates.isEmpty
            ? nil
            : { type in
                candidates.contains { candidate in
                    self.isSubclass(canonicalType: candidate, ofCanonical: type)
                        || self.isSubclass(canonicalType: type, ofCanonical: candidate)
                }
            }
        guard let index = magic.firstMatch(head: head, isPreferred: preference) else { return nil }
        let section = magic.sections[index]
        return MIMEMagicMatch(type: section.type, priority: section.priority)
    }
}
