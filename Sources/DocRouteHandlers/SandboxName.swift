/// The names a delivered file may take in a sandbox folder: its own name, then with a counter put
/// before the whole extension chain that the type engine recognised.
///
/// `1abc.pdb` gives `1abc.pdb`, `1abc-1.pdb`, `1abc-2.pdb`…; `1abc.pdb.gz` with the chain `.pdb.gz`
/// gives `1abc-1.pdb.gz`; a name without a chain gets `name-1`.
///
/// Every candidate is one safe file name: valid UTF-8 (invalid bytes of the source name become
/// U+FFFD), no `/`, NUL, control characters or bidirectional overrides (each becomes `_`), never `.`
/// or `..` and never starting with `.` (leading dots become `_`: the file must not look hidden or
/// like a temporary), and at most ``maximumBytes`` bytes (the stem is cut at a character boundary,
/// the chain and counter are kept). Pure: nothing here touches a file system.
package struct SandboxName: Sendable, Hashable {
    /// The longest file name Linux file systems take, in bytes.
    package static let fileNameLimit = 255

    /// The sanitised name without its extension chain (never empty).
    package let stem: String
    /// The sanitised extension chain with its leading dot (`.pdb.gz`), or empty.
    package let extensionChain: String
    /// The longest candidate, in UTF-8 bytes.
    package let maximumBytes: Int

    /// The sanitised name for `original`, whose recognised chain of extensions is `extensionChain`
    /// (`.pdb.gz`; a missing leading dot is added; empty for none). A chain that is not the end of
    /// the sanitised name, or is the whole of it, is ignored.
    ///
    /// - Parameter maximumBytes: at most ``fileNameLimit``; less when a suffix is added later (a
    ///   quarantined file's `.reason` file); at least 64 (smaller limits are raised to 64).
    package init(original: String, extensionChain: String = "", maximumBytes: Int = SandboxName.fileNameLimit) {
        let limit = max(64, maximumBytes)
        let name = Self.sanitize(original)
        var chain = Self.replacingUnsafeCharacters(extensionChain)
        if !chain.isEmpty, !chain.hasPrefix(".") { chain = "." + chain }
        // The counter of the longest possible form ("-" and 19 digits) and a stem of at least one
        // character must fit beside the chain.
        let chainFits = chain.utf8.count + 20 + 4 <= limit
        if chainFits, !chain.isEmpty, name.utf8.count > chain.utf8.count, name.utf8.reversed().starts(with: chain.utf8.reversed()) {
            let stemBytes = name.utf8.count - chain.utf8.count
            stem = String(decoding: name.utf8.prefix(stemBytes), as: UTF8.self)
            self.extensionChain = chain
        } else {
            stem = name
            self.extensionChain = ""
        }
        self.maximumBytes = limit
    }

    /// The sanitised name for raw file-name bytes (from a directory entry, possibly not UTF-8).
    package init(originalBytes: some Collection<UInt8>, extensionChain: String = "", maximumBytes: Int = SandboxName.fileNameLimit) {
        self.init(
            original: String(decoding: originalBytes, as: UTF8.self),
            extensionChain: extensionChain,
            maximumBytes: maximumBytes
        )
    }

    /// The name to try first: the file's own (sanitised, shortened if needed).
    package var original: String { candidate(0) }

    /// The `counter`-th candidate: 0 is the file's own name, 1 is `stem-1` plus the chain, and so on.
    package func candidate(_ counter: Int) -> String {
        let suffix = (counter == 0 ? "" : "-\(counter)") + extensionChain
        let budget = maximumBytes - suffix.utf8.count
        return Self.prefix(of: stem, fittingIn: budget) + suffix
    }

    /// One safe file-name component for any string: unsafe characters become `_`, leading dots
    /// become `_`, invalid UTF-8 was already U+FFFD; an empty name becomes `untitled`. Not shortened.
    package static func sanitize(_ name: String) -> String {
        var text = replacingUnsafeCharacters(name)
        if text.isEmpty { return "untitled" }
        let leadingDots = text.utf8.prefix { $0 == UInt8(ascii: ".") }.count
        if leadingDots > 0 {
            text = String(repeating: "_", count: leadingDots) + String(text.unicodeScalars.dropFirst(leadingDots))
        }
        return text
    }

    /// ``sanitize(_:)``, then shortened to `maximumBytes` at a character boundary: for a folder
    /// name such as a mailbox.
    package static func sanitizedComponent(_ name: String, maximumBytes: Int = fileNameLimit) -> String {
        prefix(of: sanitize(name), fittingIn: maximumBytes)
    }

    /// Characters that must not appear in a delivered name: path separator, NUL and controls (C0,
    /// DEL, C1) that break terminals and logs, and the bidirectional controls that make
    /// `invoice\u{202E}fdp.exe` read as `invoiceexe.pdf`.
    static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x2F, 0x7F, 0x80...0x9F: true
        case 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        case 0x2028, 0x2029: true
        default: false
        }
    }

    static func replacingUnsafeCharacters(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            result.append(isUnsafe(scalar) ? "_" : scalar)
        }
        return String(result)
    }

    /// The longest prefix of `text` of at most `budget` UTF-8 bytes, cut between characters (or,
    /// for one character longer than the budget, between scalars), so it stays valid UTF-8.
    static func prefix(of text: String, fittingIn budget: Int) -> String {
        if text.utf8.count <= budget { return text }
        var bytes = 0
        var end = text.startIndex
        for index in text.indices {
            let next = text.index(after: index)
            let size = text.utf8.distance(from: index, to: next)
            if bytes + size > budget { break }
            bytes += size
            end = next
        }
        if end == text.startIndex {
            var scalars = String.UnicodeScalarView()
            for scalar in text.unicodeScalars {
                bytes += UTF8.width(scalar)
                if bytes > budget { break }
                scalars.append(scalar)
            }
            return String(scalars)
        }
        return String(text[..<end])
    }

    // MARK: Names that are not documents

    /// A temporary copy is written under a name that starts with this and ends with
    /// ``temporarySuffix``, then renamed; a sanitised final name never starts with a dot, so the two
    /// can never be confused. Listings (`docroutectl quarantine list`) skip them.
    package static let temporaryPrefix = ".docroute-"
    /// See ``temporaryPrefix``.
    package static let temporarySuffix = ".tmp"

    /// Whether a name is one of docrouted's temporaries.
    package static func isTemporaryName(_ name: String) -> Bool {
        name.hasPrefix(temporaryPrefix) && name.hasSuffix(temporarySuffix)
    }

    /// Beside each quarantined file, a file of this suffix says why it is there.
    package static let quarantineReasonSuffix = ".reason"
}
