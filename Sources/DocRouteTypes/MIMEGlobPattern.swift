/// A `globs2` pattern, sorted into the three kinds the spec matches in turn.
///
/// Matching follows fnmatch(3) with no flags, as the spec says: `*` matches any run (also
/// a leading dot), `?` one character, `[...]` a set (`!` or `^` negates, `a-z` ranges) and
/// `\` escapes. Case folding is ASCII only, like xdgmime; callers lowercase both sides.
struct MIMEGlobPattern: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        /// No wildcard at all, e.g. `Makefile`: compared with the whole name.
        case literal
        /// `*` followed by wildcard-free text, e.g. `*.tar.gz`: a suffix test. `suffix` excludes the `*`.
        case suffix(String)
        /// Anything else, e.g. `*.so.[0-9]*`: full fnmatch.
        case full
    }

    let text: String
    let kind: Kind

    init(_ text: String) {
        self.text = text
        let special: Set<UInt8> = [UInt8(ascii: "*"), UInt8(ascii: "?"), UInt8(ascii: "["), UInt8(ascii: "\\")]
        let bytes = Array(text.utf8)
        if !bytes.contains(where: special.contains) {
            kind = .literal
        } else if bytes.count > 1, bytes[0] == UInt8(ascii: "*"), !bytes.dropFirst().contains(where: special.contains) {
            kind = .suffix(String(decoding: bytes.dropFirst(), as: UTF8.self))
        } else {
            kind = .full
        }
    }

    /// Whether `name` matches `pattern` under fnmatch(3) rules with no flags.
    static func fnmatch(pattern: UnsafeBufferPointer<UInt8>, name: UnsafeBufferPointer<UInt8>) -> Bool {
        var p = 0
        var n = 0
        // Where to resume after a mismatch: the pattern just past the last `*`, and the name
        // position that `*` should swallow one more character of.
        var starPattern = -1
        var starName = 0
        while n < name.count {
            if p < pattern.count {
                let token = pattern[p]
                if token == UInt8(ascii: "*") {
                    starPattern = p + 1
                    starName = n
                    p += 1
                    continue
                }
                if token == UInt8(ascii: "?") {
                    p += 1
                    n += scalarLength(name, at: n)
                    continue
                }
                if token == UInt8(ascii: "["), let set = matchSet(pattern, at: p, name: name, nameIndex: n) {
                    if set.matched {
                        p = set.next
                        n += scalarLength(name, at: n)
                        continue
                    }
                } else {
                    var literal = token
                    var width = 1
                    if token == UInt8(ascii: "\\"), p + 1 < pattern.count {
                        literal = pattern[p + 1]
                        width = 2
                    }
                    if literal == name[n] {
                        p += width
                        n += 1
                        continue
                    }
                }
            }
            guard starPattern >= 0 else { return false }
            starName += scalarLength(name, at: starName)
            p = starPattern
            n = starName
        }
        while p < pattern.count, pattern[p] == UInt8(ascii: "*") { p += 1 }
        return p == pattern.count
    }

    /// Matches a `[...]` set at `pattern[start]` against the character at `name[nameIndex]`.
    /// Returns `nil` when the bracket is not closed, so `[` is then taken literally as fnmatch does.
    private static func matchSet(
        _ pattern: UnsafeBufferPointer<UInt8>,
        at start: Int,
        name: UnsafeBufferPointer<UInt8>,
        nameIndex: Int
    ) -> (matched: Bool, next: Int)? {
        let character = scalarValue(name, at: nameIndex)
        var p = start + 1
        var negated = false
        if p < pattern.count, pattern[p] == UInt8(ascii: "!") || pattern[p] == UInt8(ascii: "^") {
            negated = true
            p += 1
        }
        var found = false
        var first = true
        while p < pattern.count {
            if pattern[p] == UInt8(ascii: "]"), !first {
                return (found != negated, p + 1)
            }
            first = false
            var low = UInt32(pattern[p])
            if low == UInt32(UInt8(ascii: "\\")), p + 1 < pattern.count {
                p += 1
                low = UInt32(pattern[p])
            }
            p += 1
            var high = low
            if p + 1 < pattern.count, pattern[p] == UInt8(ascii: "-"), pattern[p + 1] != UInt8(ascii: "]") {
                high = UInt32(pattern[p + 1])
                p += 2
            }
            if character >= low, character <= high { found = true }
        }
        return nil
    }

    /// The byte length of the UTF-8 sequence starting at `index` (1 for stray bytes).
    @inline(__always)
    static func scalarLength(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Int {
        let lead = bytes[index]
        let length: Int
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0...0xEF: length = 3
        case 0xF0...0xF4: length = 4
        default: return 1
        }
        guard index + length <= bytes.count else { return 1 }
        for offset in 1..<length where bytes[index + offset] & 0xC0 != 0x80 {
            return 1
        }
        return length
    }

    /// The Unicode scalar value at `index`, or the byte itself for malformed input.
    static func scalarValue(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> UInt32 {
        let length = scalarLength(bytes, at: index)
        guard length > 1 else { return UInt32(bytes[index]) }
        var value = UInt32(bytes[index]) & (0x7F >> UInt32(length))
        for offset in 1..<length {
            value = value << 6 | UInt32(bytes[index + offset] & 0x3F)
        }
        return value
    }
}
