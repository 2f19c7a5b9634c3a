extension MIMEDatabase {
    /// The glob rules matching the last path component of `filename`, best first.
    ///
    /// Only the first kind of rule with any match counts: literal names (`Makefile`), then
    /// the longest `*suffix` pattern (`*.tar.gz`, not also `*.gz`), then other fnmatch
    /// patterns (`*.so.[0-9]*`). Each kind is tried with the name folded to lower case against
    /// the case-insensitive rules first, then as written against the `cs` rules. Matches are
    /// ranked by weight, then pattern length, then directory precedence. Case is folded for
    /// ASCII only.
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

    /// Magic at or above this priority settles a name with several candidates even when it is
    /// related to none of them (GLib's rule: such magic is "sure").
    public static let decisiveMagicPriority = 80

    /// Detects a file's type the way the shared-mime-info spec describes and GLib's
    /// `g_content_type_guess` (the reference implementation) does it.
    ///
    /// 1. Glob match on the name (see ``globMatches(filename:)``): a single type is the answer
    ///    and the content is not consulted (unless
    ///    ``MIMEDetectionOptions/contentOverridesNameAtPriority`` says otherwise).
    /// 2. Otherwise sniff `head`: the first magic section that matches (at equal priority one
    ///    related to a name candidate, as xdgmime does), else `text/plain` when the head looks
    ///    like text. A file with a name is never sniffed as a `.desktop` launcher.
    /// 3. No glob candidate: the sniffed type, else `application/octet-stream`. Several
    ///    candidates: magic of priority 80 or more wins outright; otherwise the first candidate
    ///    (highest weight first) that is the sniffed type or a subclass of it
    ///    (`application/vnd.openxmlformats-officedocument.wordprocessingml.document` is a
    ///    `application/zip`); else the first candidate.
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
            candidates = globTypes(filename: filename)
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

        var sniffed = magicMatch(head: head, preferring: candidates)
        // A launcher hidden under another name must not become one by its content (GLib's rule).
        if filename != nil, options.usesFileName, sniffed?.type == Self.desktopEntry { sniffed = nil }
        let looksLikeText = sniffed == nil && MIMETextSniffer.looksLikeText(head)
        if candidates.isEmpty {
            if let sniffed {
                return MIMEDetection(mimeType: sniffed.type, decidedBy: .magic, magic: sniffed)
            }
            return looksLikeText
                ? MIMEDetection(mimeType: Self.plainText, decidedBy: .textFallback)
                : MIMEDetection(mimeType: Self.octetStream, decidedBy: .binaryFallback)
        }

        // Several candidates: sure magic wins; otherwise the content picks the candidate it agrees with.
        if let sniffed, sniffed.priority >= Self.decisiveMagicPriority {
            return MIMEDetection(mimeType: sniffed.type, decidedBy: .magic, globCandidates: candidates, magic: sniffed)
        }
        if let contentType = sniffed?.type ?? (looksLikeText ? Self.plainText : nil),
            let agreeing = candidates.first(where: { isSubclass(canonicalType: $0, ofCanonical: contentType) })
        {
            return MIMEDetection(
                mimeType: agreeing,
                decidedBy: sniffed == nil ? .glob : .magic,
                globCandidates: candidates,
                magic: sniffed
            )
        }
        return MIMEDetection(mimeType: candidates[0], decidedBy: .glob, globCandidates: candidates, magic: sniffed)
    }

    /// The distinct types the glob rules give for a name, highest weight first.
    func globTypes(filename: String) -> [String] {
        let found = globs.matches(fileName: filename)
        var types: [String] = []
        types.reserveCapacity(found.count)
        for id in found {
            let type = globs.entries[Int(id)].type
            if !types.contains(type) { types.append(type) }
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
