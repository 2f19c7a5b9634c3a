import CDocRouteBytes

/// All magic sections of a database in checking order, flattened and indexed for speed.
///
/// A section's type matches when any of its top-level rules matches; a rule matches when its
/// bytes match and, if it has nested rules, at least one of them matches too ("a and (b or c)").
///
/// Most top-level rules test a fixed offset, so they are indexed by (offset, first byte):
/// one array read per distinct offset finds the few sections worth evaluating. The rest
/// (byte ranges, masked first bytes) are tested directly; there are about a hundred.
struct MIMEMagicTable: Sendable {
    struct Section: Sendable {
        var type: String
        var priority: Int
        var firstRule: Int
        var endRule: Int
    }

    struct Rule: Sendable {
        var offset: Int
        var rangeLength: Int
        var valueStart: Int
        var valueLength: Int
        /// Start of the mask in the pool, or -1 for "all one bits".
        var maskStart: Int
        /// One past the last rule nested under this one.
        var subtreeEnd: Int
        /// The first four (masked) value bytes as one host-order word, checked before anything
        /// slower; only meaningful when `valueLength >= 4`.
        var prefixWord: UInt32
        var prefixMask: UInt32
        /// For byte ranges: the value byte memchr looks for, picked as the least likely one in
        /// ordinary files; -1 when masks leave no byte to search for.
        var anchor: Int
    }

    /// One distinct fixed offset and, per possible byte there, which sections could match.
    private struct OffsetIndex: Sendable {
        var offset: Int
        /// 257 entries: the candidates for byte `b` are `sections[bucketStarts[b] ..< bucketStarts[b + 1]]`.
        var bucketStarts: [Int32]
        var sections: [Int32]
    }

    private struct ScannedRule: Sendable {
        var rule: Int
        var section: Int32
    }

    /// A byte-range rule found through its anchor byte during one pass over the head.
    private struct AnchoredRule: Sendable {
        var rule: Int32
        var section: Int32
        var anchor: Int32
        var firstStart: Int32
        var lastStart: Int32
    }

    /// Range rules whose anchor lies below this are found in a single pass over the head
    /// instead of one memchr each; nearly all real ones search the first 257 bytes.
    private static let anchorScanLimit = 1024

    /// Sections sorted by descending priority; ties keep layer precedence, then file order.
    let sections: [Section]
    let rules: [Rule]
    /// Every value and mask byte, back to back.
    let pool: [UInt8]
    private let offsetIndexes: [OffsetIndex]
    /// Top-level rules tested one by one: masked first bytes and the few very wide ranges.
    private let scannedRules: [ScannedRule]
    /// 257 entries into `anchoredRules`, by anchor byte.
    private let anchorBucketStarts: [Int32]
    private let anchoredRules: [AnchoredRule]
    private let anchorScanEnd: Int
    /// The most leading bytes any rule can look at.
    let maximumExtent: Int

    init(sections sourceSections: [MIMEDatabaseLayer.MagicSection]) {
        var sections: [Section] = []
        var rules: [Rule] = []
        var pool: [UInt8] = []
        var maximumExtent = 0
        for source in sourceSections {
            let first = rules.count
            for rule in source.rules {
                let valueStart = pool.count
                pool += rule.value
                var maskStart = -1
                if let mask = rule.mask, mask.contains(where: { $0 != 0xFF }) {
                    maskStart = pool.count
                    pool += mask
                }
                let mask = maskStart >= 0 ? rule.mask ?? [] : Array(repeating: 0xFF, count: rule.value.count)
                var prefixWord: UInt32 = 0
                var prefixMask: UInt32 = 0
                if rule.value.count >= 4 {
                    let masked = (0..<4).map { rule.value[$0] & mask[$0] }
                    prefixWord = masked.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
                    prefixMask = mask[0..<4].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
                }
                rules.append(
                    Rule(
                        offset: rule.offset,
                        rangeLength: rule.rangeLength,
                        valueStart: valueStart,
                        valueLength: rule.value.count,
                        maskStart: maskStart,
                        subtreeEnd: 0,
                        prefixWord: prefixWord,
                        prefixMask: prefixMask,
                        anchor: Self.anchor(value: rule.value, mask: mask)
                    )
                )
                maximumExtent = max(maximumExtent, rule.offset + rule.rangeLength - 1 + rule.value.count)
            }
            // A rule's subtree ends at the next rule whose indent is not deeper.
            for index in first..<rules.count {
                var end = index + 1
                while end < rules.count, source.rules[end - first].indent > source.rules[index - first].indent {
                    end += 1
                }
                rules[index].subtreeEnd = end
            }
            sections.append(
                Section(type: source.type, priority: source.priority, firstRule: first, endRule: rules.count)
            )
        }

        var bucketsByOffset: [Int: [[Int32]]] = [:]
        let emptyBuckets = [[Int32]](repeating: [], count: 256)
        var scannedRules: [ScannedRule] = []
        var anchoredBuckets: [[AnchoredRule]] = Array(repeating: [], count: 256)
        var anchorScanEnd = 0
        for (sectionIndex, section) in sections.enumerated() {
            var ruleIndex = section.firstRule
            while ruleIndex < section.endRule {
                let rule = rules[ruleIndex]
                let firstMask: UInt8 = rule.maskStart >= 0 ? pool[rule.maskStart] : 0xFF
                if rule.rangeLength == 1, rule.valueLength > 0, firstMask != 0 {
                    let firstValue = pool[rule.valueStart] & firstMask
                    let id = Int32(sectionIndex)
                    for byte in 0...255 where UInt8(byte) & firstMask == firstValue {
                        bucketsByOffset[rule.offset, default: emptyBuckets][byte].appendIfNotLast(id)
                    }
                } else if rule.rangeLength > 1, rule.anchor >= 0,
                    rule.offset + rule.rangeLength - 1 + rule.anchor < Self.anchorScanLimit
                {
                    let anchorByte = Int(pool[rule.valueStart + rule.anchor])
                    anchoredBuckets[anchorByte].append(
                        AnchoredRule(
                            rule: Int32(ruleIndex),
                            section: Int32(sectionIndex),
                            anchor: Int32(rule.anchor),
                            firstStart: Int32(rule.offset),
                            lastStart: Int32(rule.offset + rule.rangeLength - 1)
                        )
                    )
                    anchorScanEnd = max(anchorScanEnd, rule.offset + rule.rangeLength + rule.anchor)
                } else {
                    scannedRules.append(ScannedRule(rule: ruleIndex, section: Int32(sectionIndex)))
                }
                ruleIndex = rule.subtreeEnd
            }
        }
        var offsetIndexes: [OffsetIndex] = []
        for offset in bucketsByOffset.keys.sorted() {
            let buckets = bucketsByOffset[offset] ?? []
            var starts: [Int32] = [0]
            var flat: [Int32] = []
            for bucket in buckets {
                flat += bucket
                starts.append(Int32(flat.count))
            }
            offsetIndexes.append(OffsetIndex(offset: offset, bucketStarts: starts, sections: flat))
        }

        self.sections = sections
        self.rules = rules
        self.pool = pool
        self.offsetIndexes = offsetIndexes
        self.scannedRules = scannedRules
        var anchorBucketStarts: [Int32] = [0]
        var anchoredRules: [AnchoredRule] = []
        for bucket in anchoredBuckets {
            anchoredRules += bucket
            anchorBucketStarts.append(Int32(anchoredRules.count))
        }
        self.anchorBucketStarts = anchorBucketStarts
        self.anchoredRules = anchoredRules
        self.anchorScanEnd = anchorScanEnd
        self.maximumExtent = maximumExtent
    }

    /// The first section in checking order whose rules match `head`.
    ///
    /// Among sections of that same priority, one whose type `isPreferred` accepts wins over
    /// the first; the detector uses this to favour a glob candidate, as xdgmime does.
    func firstMatch(head: UnsafeRawBufferPointer, isPreferred: ((String) -> Bool)? = nil) -> Int? {
        guard !sections.isEmpty, head.count > 0 else { return nil }
        let wordCount = (sections.count + 63) / 64
        return withUnsafeTemporaryAllocation(of: UInt64.self, capacity: wordCount) { candidates -> Int? in
            candidates.initialize(repeating: 0)
            markCandidates(head: head, into: candidates)
            var chosen: Int?
            for word in 0..<wordCount {
                var bits = candidates[word]
                while bits != 0 {
                    let section = word * 64 + bits.trailingZeroBitCount
                    bits &= bits - 1
                    if let chosen, sections[section].priority != sections[chosen].priority {
                        return chosen
                    }
                    guard sectionMatches(section, head: head) else { continue }
                    guard let isPreferred else { return section }
                    if isPreferred(sections[section].type) { return section }
                    if chosen == nil { chosen = section }
                }
            }
            return chosen
        }
    }

    /// Sets a bit for every section that has a top-level rule worth evaluating.
    private func markCandidates(head: UnsafeRawBufferPointer, into candidates: UnsafeMutableBufferPointer<UInt64>) {
        for index in offsetIndexes {
            guard index.offset < head.count else { break }
            let byte = Int(head[index.offset])
            let start = Int(index.bucketStarts[byte])
            let end = Int(index.bucketStarts[byte + 1])
            for position in start..<end {
                let section = Int(index.sections[position])
                candidates[section >> 6] |= 1 << UInt64(section & 63)
            }
        }
        let scanEnd = min(head.count, anchorScanEnd)
        if scanEnd > 0, let base = head.baseAddress {
            anchorBucketStarts.withUnsafeBufferPointer { starts in
                anchoredRules.withUnsafeBufferPointer { anchored in
                    pool.withUnsafeBufferPointer { poolBuffer in
                        guard let poolBase = poolBuffer.baseAddress else { return }
                        for position in 0..<scanEnd {
                            let byte = Int(head[position])
                            let first = Int(starts[byte])
                            let end = Int(starts[byte + 1])
                            guard first != end else { continue }
                            for entry in anchored[first..<end] {
                                let start = position - Int(entry.anchor)
                                guard start >= Int(entry.firstStart), start <= Int(entry.lastStart) else { continue }
                                let section = Int(entry.section)
                                guard candidates[section >> 6] & (1 << UInt64(section & 63)) == 0 else { continue }
                                let rule = rules[Int(entry.rule)]
                                guard start + rule.valueLength <= head.count else { continue }
                                if valueMatches(rule, at: base + start, pool: poolBase) {
                                    candidates[section >> 6] |= 1 << UInt64(section & 63)
                                }
                            }
                        }
                    }
                }
            }
        }
        for scanned in scannedRules {
            let section = Int(scanned.section)
            guard candidates[section >> 6] & (1 << UInt64(section & 63)) == 0 else { continue }
            if ruleBytesMatch(rules[scanned.rule], head: head) {
                candidates[section >> 6] |= 1 << UInt64(section & 63)
            }
        }
    }

    func sectionMatches(_ section: Int, head: UnsafeRawBufferPointer) -> Bool {
        let bounds = sections[section]
        var rule = bounds.firstRule
        while rule < bounds.endRule {
            if ruleMatches(rule, head: head) { return true }
            rule = rules[rule].subtreeEnd
        }
        return false
    }

    private func ruleMatches(_ index: Int, head: UnsafeRawBufferPointer) -> Bool {
        let rule = rules[index]
        guard ruleBytesMatch(rule, head: head) else { return false }
        var child = index + 1
        guard child < rule.subtreeEnd else { return true }
        while child < rule.subtreeEnd {
            if ruleMatches(child, head: head) { return true }
            child = rules[child].subtreeEnd
        }
        return false
    }

    /// Whether the rule's own value occurs at one of its offsets (children not considered).
    private func ruleBytesMatch(_ rule: Rule, head: UnsafeRawBufferPointer) -> Bool {
        let length = rule.valueLength
        guard length > 0 else { return rule.offset <= head.count }
        let last = min(rule.offset + rule.rangeLength - 1, head.count - length)
        guard last >= rule.offset, let base = head.baseAddress else { return false }
        return pool.withUnsafeBufferPointer { poolBuffer -> Bool in
            guard let poolBase = poolBuffer.baseAddress else { return false }
            if rule.rangeLength == 1 {
                return valueMatches(rule, at: base + rule.offset, pool: poolBase)
            }
            guard rule.anchor >= 0 else {
                for position in rule.offset...last where valueMatches(rule, at: base + position, pool: poolBase) {
                    return true
                }
                return false
            }
            // memchr skips to the rare anchor byte far faster than testing every offset.
            let anchorByte = Int32(poolBase[rule.valueStart + rule.anchor])
            var position = rule.offset
            while position <= last {
                guard let hit = docroute_find_byte(base + position + rule.anchor, anchorByte, last - position + 1) else {
                    return false
                }
                position = base.distance(to: UnsafeRawPointer(hit)) - rule.anchor
                if valueMatches(rule, at: base + position, pool: poolBase) { return true }
                position += 1
            }
            return false
        }
    }

    /// Whether the rule's value (under its mask) is at `bytes`; the caller checked the bounds.
    @inline(__always)
    private func valueMatches(_ rule: Rule, at bytes: UnsafeRawPointer, pool: UnsafePointer<UInt8>) -> Bool {
        let length = rule.valueLength
        let value = pool + rule.valueStart
        var start = 0
        if length >= 4 {
            guard bytes.loadUnaligned(as: UInt32.self) & rule.prefixMask == rule.prefixWord else { return false }
            start = 4
            if length == 4 { return true }
        }
        if rule.maskStart < 0 {
            return docroute_compare_bytes(bytes + start, value + start, length - start) == 0
        }
        let mask = pool + rule.maskStart
        for index in start..<length
        where bytes.load(fromByteOffset: index, as: UInt8.self) & mask[index] != value[index] & mask[index] {
            return false
        }
        return true
    }

    /// Picks the value byte (among the first 16 that the mask keeps whole) least likely to
    /// occur in ordinary files, so a range search stops at few false candidates.
    private static func anchor(value: [UInt8], mask: [UInt8]) -> Int {
        var best = -1
        var bestScore = Int.max
        for index in 0..<min(value.count, 16) where mask[index] == 0xFF {
            let score = commonness(value[index])
            if score < bestScore {
                best = index
                bestScore = score
            }
        }
        return best
    }

    /// A rough frequency rank of a byte in text and typical binary files; higher is commoner.
    private static func commonness(_ byte: UInt8) -> Int {
        switch byte {
        case UInt8(ascii: " "): return 100
        case UInt8(ascii: "e"), UInt8(ascii: "t"), UInt8(ascii: "a"), UInt8(ascii: "o"), UInt8(ascii: "i"),
            UInt8(ascii: "n"), UInt8(ascii: "s"), UInt8(ascii: "r"), UInt8(ascii: "h"), UInt8(ascii: "l"):
            return 90
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return 70
        case UInt8(ascii: "\n"), 0x00: return 65
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return 45
        case UInt8(ascii: "."), UInt8(ascii: ","), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "/"),
            UInt8(ascii: "\""), UInt8(ascii: "="), UInt8(ascii: ":"), UInt8(ascii: "("), UInt8(ascii: ")"),
            UInt8(ascii: ";"), UInt8(ascii: "'"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "\t"),
            UInt8(ascii: "\r"), 0xFF:
            return 40
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return 30
        case 0x21...0x7E: return 20
        default: return 10
        }
    }
}

extension Array where Element == Int32 {
    fileprivate mutating func appendIfNotLast(_ id: Int32) {
        if last != id { append(id) }
    }
}
