/// All glob rules of a database, indexed so that a file name costs a few hash lookups.
///
/// The spec's precedence is kept as three tiers: literal names first, then `*suffix`
/// patterns (mostly `*.ext`, found by looking up `.`-started tails of the name, longest
/// first), then full fnmatch patterns. Only the first tier with a match counts.
struct MIMEGlobTable: Sendable {
    struct Entry: Sendable {
        var type: String
        var weight: Int
        var pattern: String
        var caseSensitive: Bool
        /// Index of the layer the rule came from; lower is higher precedence.
        var layer: Int
        /// Position in load order, for a stable final tie-break.
        var order: Int
    }

    /// Precomputed from ``isRanked(_:before:)`` so sorting a handful of matches compares integers.
    private let rankOfEntry: [Int32]

    private struct CompiledPattern: Sendable {
        var bytes: [UInt8]
        var entry: Int32
    }

    let entries: [Entry]
    /// Literal names, ASCII-lowercased, for case-insensitive rules.
    private let literals: [String: [Int32]]
    private let literalsCaseSensitive: [String: [Int32]]
    /// Suffixes that start with `.` (the `*.ext` family), lowercased for case-insensitive rules.
    private let dotSuffixes: [String: [Int32]]
    private let dotSuffixesCaseSensitive: [String: [Int32]]
    /// The few suffixes that do not start with `.`, such as `~` or `,v`.
    private let otherSuffixes: [CompiledPattern]
    private let fullPatterns: [CompiledPattern]

    init(entries: [Entry]) {
        self.entries = entries
        var rankOfEntry = [Int32](repeating: 0, count: entries.count)
        let ranked = entries.indices.sorted { Self.isRanked(entries[$0], before: entries[$1]) }
        for (rank, index) in ranked.enumerated() {
            rankOfEntry[index] = Int32(rank)
        }
        self.rankOfEntry = rankOfEntry
        var literals: [String: [Int32]] = [:]
        var literalsCaseSensitive: [String: [Int32]] = [:]
        var dotSuffixes: [String: [Int32]] = [:]
        var dotSuffixesCaseSensitive: [String: [Int32]] = [:]
        var otherSuffixes: [CompiledPattern] = []
        var fullPatterns: [CompiledPattern] = []
        for (index, entry) in entries.enumerated() {
            let id = Int32(index)
            let text = entry.caseSensitive ? entry.pattern : Self.asciiLowercased(entry.pattern)
            switch MIMEGlobPattern(text).kind {
            case .literal:
                if entry.caseSensitive {
                    literalsCaseSensitive[text, default: []].append(id)
                } else {
                    literals[text, default: []].append(id)
                }
            case .suffix(let suffix) where suffix.utf8.first == UInt8(ascii: "."):
                if entry.caseSensitive {
                    dotSuffixesCaseSensitive[suffix, default: []].append(id)
                } else {
                    dotSuffixes[suffix, default: []].append(id)
                }
            case .suffix(let suffix):
                otherSuffixes.append(CompiledPattern(bytes: Array(suffix.utf8), entry: id))
            case .full:
                fullPatterns.append(CompiledPattern(bytes: Array(text.utf8), entry: id))
            }
        }
        self.literals = literals
        self.literalsCaseSensitive = literalsCaseSensitive
        self.dotSuffixes = dotSuffixes
        self.dotSuffixesCaseSensitive = dotSuffixesCaseSensitive
        self.otherSuffixes = otherSuffixes
        self.fullPatterns = fullPatterns
    }

    /// Entries matching the last path component of `fileName`, from the first step that has
    /// any, highest weight first.
    ///
    /// The steps are xdgmime's (GLib's implementation of the spec): a literal name, then the
    /// longest matching `*suffix`, then fnmatch patterns; each compares the name as written with
    /// the `cs` rules and folded to lower case with the others, a `cs` match first. Only the
    /// longest suffix counts, whatever its weight: `x.tar.gz` is a compressed tar and never also
    /// a gzip file. Every rule at that suffix is kept, of any weight, so the content can choose
    /// among them (`*.exe`, `*.asc`, `*.pdb`); weights order them for when it cannot.
    func matches(fileName: String) -> [Int32] {
        var name = fileName
        return name.withUTF8 { whole -> [Int32] in
            var start = whole.count
            while start > 0, whole[start - 1] != UInt8(ascii: "/") { start -= 1 }
            let base = UnsafeBufferPointer(rebasing: whole[start...])
            guard !base.isEmpty else { return [] }
            return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: base.count) { lowerStorage in
                for index in 0..<base.count {
                    lowerStorage[index] = Self.asciiLowercased(base[index])
                }
                let lower = UnsafeBufferPointer(lowerStorage)
                var found = matchLiterals(base: base, lower: lower)
                if found.isEmpty {
                    // The longest suffix, as written or folded; at equal length a `cs` rule that
                    // matched the name as written hides the folded ones (`main.C` is C++).
                    let exact = matchSuffixes(name: base, caseSensitive: true)
                    let folded = matchSuffixes(name: lower, caseSensitive: false)
                    found = exact.length >= folded.length ? exact.entries : folded.entries
                }
                if found.isEmpty { found = matchFullPatterns(name: base, caseSensitive: true) }
                if found.isEmpty { found = matchFullPatterns(name: lower, caseSensitive: false) }
                if found.count > 1 {
                    let rankOfEntry = self.rankOfEntry
                    found.sort { rankOfEntry[Int($0)] < rankOfEntry[Int($1)] }
                }
                return found
            }
        }
    }

    /// Ranking of matches: higher weight, then longer pattern, then case-sensitive over
    /// case-insensitive, then the layer with higher precedence, then file order.
    static func isRanked(_ a: Entry, before b: Entry) -> Bool {
        if a.weight != b.weight { return a.weight > b.weight }
        let aLength = a.pattern.utf8.count
        let bLength = b.pattern.utf8.count
        if aLength != bLength { return aLength > bLength }
        if a.caseSensitive != b.caseSensitive { return a.caseSensitive }
        if a.layer != b.layer { return a.layer < b.layer }
        return a.order < b.order
    }

    private func matchLiterals(base: UnsafeBufferPointer<UInt8>, lower: UnsafeBufferPointer<UInt8>) -> [Int32] {
        if !literalsCaseSensitive.isEmpty, let hits = literalsCaseSensitive[String(decoding: base, as: UTF8.self)] {
            return hits
        }
        return literals[String(decoding: lower, as: UTF8.self)] ?? []
    }

    /// The rules of the longest `*suffix` that ends `name`: folded rules when `caseSensitive`
    /// is false (`name` is then lower case), `cs` rules otherwise.
    private func matchSuffixes(name: UnsafeBufferPointer<UInt8>, caseSensitive: Bool) -> (entries: [Int32], length: Int) {
        let table = caseSensitive ? dotSuffixesCaseSensitive : dotSuffixes
        var found: [Int32] = []
        var longest = 0
        if !table.isEmpty {
            // The first `.` gives the longest tail: stop at the first tail that has rules.
            for index in 0..<name.count where name[index] == UInt8(ascii: ".") {
                if let hits = table[String(decoding: UnsafeBufferPointer(rebasing: name[index...]), as: UTF8.self)] {
                    found = hits
                    longest = name.count - index
                    break
                }
            }
        }
        for suffix in otherSuffixes where entries[Int(suffix.entry)].caseSensitive == caseSensitive {
            let length = suffix.bytes.count
            guard length >= longest, name.count >= length,
                name.reversed().starts(with: suffix.bytes.reversed())
            else { continue }
            if length > longest {
                found = []
                longest = length
            }
            found.append(suffix.entry)
        }
        return (found, longest)
    }

    private func matchFullPatterns(name: UnsafeBufferPointer<UInt8>, caseSensitive: Bool) -> [Int32] {
        var found: [Int32] = []
        for pattern in fullPatterns where entries[Int(pattern.entry)].caseSensitive == caseSensitive {
            let matched = pattern.bytes.withUnsafeBufferPointer {
                MIMEGlobPattern.fnmatch(pattern: $0, name: name)
            }
            if matched { found.append(pattern.entry) }
        }
        return found
    }

    @inline(__always)
    static func asciiLowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }

    static func asciiLowercased(_ text: String) -> String {
        String(decoding: text.utf8.map { asciiLowercased($0) }, as: UTF8.self)
    }
}
