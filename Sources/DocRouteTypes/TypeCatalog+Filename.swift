extension TypeCatalog {
    /// Single-extension names for a compressed tar, and the type inside.
    static let compressedTarExtensions: Set<String> = ["tgz", "taz", "tbz", "tbz2", "tb2", "txz", "tzst", "tlz"]

    /// Types the name alone gives, from the extensions the catalog knows.
    ///
    /// `1abc.pdb.gz` is a gzip archive with inner type `com.sunsetlakesoftware.molecules.pdb` when that
    /// type is declared; `x.tar.gz` a gzip archive holding `public.tar-archive`; `x.tgz` the catalog's
    /// gzip'd tar holding `public.tar-archive`. A leading dot (hidden file) is not an extension.
    public func match(filename: String) -> FilenameMatch {
        let utf8 = filename.utf8
        // Extensions never span a path separator.
        let nameStart = utf8.lastIndex(of: UInt8(ascii: "/")).map { utf8.index(after: $0) } ?? utf8.startIndex
        guard let lastDot = utf8[nameStart...].lastIndex(of: UInt8(ascii: ".")),
              lastDot != nameStart,
              utf8.index(after: lastDot) != utf8.endIndex
        else { return FilenameMatch() }
        let lastExtension = String(filename[filename.index(after: lastDot)...])
        // Most extensions are lower-case already: skip the allocation of lowercased() then.
        let lowered = lastExtension.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A || $0 >= 0x80 }) ? lastExtension.lowercased() : lastExtension
        guard let outerIndex = indexByExtension[lowered]?.first else {
            return FilenameMatch(extensionChain: "." + lastExtension, unknownExtension: lowered)
        }
        var result = FilenameMatch(contentType: entries[outerIndex].declaration.identifier, extensionChain: "." + lastExtension)

        // A previous extension counts only when it names a declared type and the outer one wraps others.
        let wrapper = entries[outerIndex].declaration.identifier == "public.archive"
            || entries[outerIndex].ancestorIdentifiers.contains("public.archive")
        guard wrapper else { return result }
        if Self.compressedTarExtensions.contains(lowered), let tar = index(of: "public.tar-archive") {
            result.innerContentType = entries[tar].declaration.identifier
            return result
        }
        let head = utf8[nameStart..<lastDot]
        guard let previousDot = head.lastIndex(of: UInt8(ascii: ".")), previousDot != nameStart else { return result }
        let innerExtension = filename[filename.index(after: previousDot)..<lastDot]
        guard !innerExtension.isEmpty else { return result }
        let innerLowered = innerExtension.lowercased()
        if let combined = indexByExtension["\(innerLowered).\(lowered)"]?.first {
            // A type that declares the two-part extension itself (e.g. a handler's `pdb.gz`).
            result.contentType = entries[combined].declaration.identifier
            result.extensionChain = "." + innerExtension + "." + lastExtension
            return result
        }
        guard let inner = indexByExtension[innerLowered]?.first else { return result }
        result.innerContentType = entries[inner].declaration.identifier
        result.extensionChain = "." + innerExtension + "." + lastExtension
        return result
    }
}
