/// All glob rules of a database, indexed so that a file name costs a few hash lookups.
///
/// The spec's precedence is kept as three tiers: literal names first, then `*suffix`
/// patterns (mostly `*.ext`, found by looking up every `.`-started tail of the name), then
/// full fnmatch patterns. Only the first tier with a match counts.
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

    /// Entries matching the last path component of `fileName`, from the first tier that has
    /// any, best first (see ``isRanked(_:before:)``).
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
                if found.isEmpty { found = matchSuffixes(base: base, lower: lower) }
                if found.isEmpty { found = matchFullPatterns(base: base, lower: lower) }
                if found.count > 1 {
                    let rankOfEntry = self.rankOfEntry
                    found.sort { rankOfEntry[Int($0)] < rankOfEntry[Int($1)] }
                }
                return found
            }
        }
    }

    /// Ranking inside a tier: higher weight, then longer pattern, then case-sensitive over
    /// case-insensitive (a `*.C:cs` hit is more specific than `*.c`), then the layer with
    /// higher precedence, then file order.
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
        var found: [Int32] = []
        if !literalsCaseSensitive.isEmpty, let hits = literalsCaseSensitive[String(decoding: base, as: UTF8.self)] {
            found += hits
        }
        if let hits = literals[String(decoding: lower, as: UTF8.self)] {
            found += hits
        }
        return found
    }

    private func matchSuffixes(base: UnsafeBufferPointer<UInt8>, lower: UnsafeBufferPointer<UInt8>) -> [Int32] {
        var found: [Int32] = []
        for index in 0..<lower.count where lower[index] == UInt8(ascii: ".") {
            if let hits = dotSuffixes[String(decoding: UnsafeBufferPointer(rebasing: lower[index...]), as: UTF8.self)] {
                found += hits
            }
            if !dotSuffixesCaseSensitive.isEmpty,
                let hits = dotSuffixesCaseSensitive[
                    String(decoding: UnsafeBufferPointer(rebasing: base[index...]), as: UTF8.self)
                ]
            {
                found += hits
            }
        }
        for suffix in otherSuffixes {
            let name = entries[Int(suffix.entry)].caseSensitive ? base : lower
            if name.count >= suffix.bytes.count, name.reversed().starts(with: suffix.bytes.reversed()) {
                found.append(suffix.entry)
            }
        }
        return found
    }

    private func matchFullPatterns(base: UnsafeBufferPointer<UInt8>, lower: UnsafeBufferPointer<UInt8>) -> [Int32] {
        var found: [Int32] = []
        for pattern in fullPatterns {
            let name = entries[Int(pattern.entry)].caseSensitive ? base : lower
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
