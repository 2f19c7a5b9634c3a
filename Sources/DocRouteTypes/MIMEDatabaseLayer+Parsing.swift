extension MIMEDatabaseLayer {
    static let magicHeader: [UInt8] = Array("MIME-Magic\0\n".utf8)
    static let noGlobsPattern = "__NOGLOBS__"
    static let noMagicValue: [UInt8] = Array("__NOMAGIC__".utf8)
    /// Far beyond any offset, range or length a real database uses; bounds keep arithmetic from overflowing.
    static let magicNumberLimit = 1 << 30

    // MARK: globs2

    /// Parses `weight:type:pattern[:flags[:more]]` lines.
    static func parseGlobs2(_ bytes: [UInt8], path: String, issues: inout [String]) throws -> [GlobRule] {
        try requireUTF8(bytes, path: path)
        var rules: [GlobRule] = []
        forEachLine(bytes) { lineNumber, line in
            // Fields after the fourth are reserved for future use and must be ignored.
            let fields = line.split(separator: UInt8(ascii: ":"), maxSplits: 4, omittingEmptySubsequences: false)
            guard fields.count >= 3, let weight = decimal(fields[0]) else {
                issues.append("\(path):\(lineNumber): expected weight:type:pattern")
                return
            }
            let type = String(decoding: fields[1], as: UTF8.self)
            let pattern = String(decoding: fields[2], as: UTF8.self)
            guard type.utf8.contains(UInt8(ascii: "/")), !pattern.isEmpty else {
                issues.append("\(path):\(lineNumber): empty pattern or a type without '/'")
                return
            }
            let flags = fields.count > 3 ? fields[3].split(separator: UInt8(ascii: ",")) : []
            rules.append(
                GlobRule(
                    weight: weight,
                    type: type,
                    pattern: pattern,
                    caseSensitive: flags.contains { $0.elementsEqual("cs".utf8) },
                    deletesEarlierGlobs: pattern == noGlobsPattern
                )
            )
        }
        // update-mime-database writes every `cs` rule a second time without flags, for readers
        // that do not know the field; taken literally that copy would make the rule match any
        // case (`CORE` as a core dump). mime.cache, which GLib reads, holds only the `cs` rule.
        var caseSensitive = Set<String>()
        for rule in rules where rule.caseSensitive {
            caseSensitive.insert("\(rule.weight):\(rule.type):\(rule.pattern)")
        }
        if !caseSensitive.isEmpty {
            rules.removeAll { !$0.caseSensitive && caseSensitive.contains("\($0.weight):\($0.type):\($0.pattern)") }
        }
        return rules
    }

    // MARK: subclasses, aliases

    /// Parses `first second` lines (both files share this shape).
    static func parsePairs(_ bytes: [UInt8], path: String, issues: inout [String]) throws -> [TypePair] {
        try requireUTF8(bytes, path: path)
        var pairs: [TypePair] = []
        forEachLine(bytes) { lineNumber, line in
            let fields = line.split(separator: UInt8(ascii: " "))
            guard fields.count == 2 else {
                issues.append("\(path):\(lineNumber): expected two MIME types separated by a space")
                return
            }
            pairs.append(
                TypePair(
                    first: String(decoding: fields[0], as: UTF8.self),
                    second: String(decoding: fields[1], as: UTF8.self)
                )
            )
        }
        return pairs
    }

    /// Calls `body` with the 1-based number and bytes of every line that is neither empty nor a `#` comment.
    private static func forEachLine(_ bytes: [UInt8], _ body: (Int, ArraySlice<UInt8>) -> Void) {
        var lineNumber = 0
        var start = 0
        while start < bytes.count {
            lineNumber += 1
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
            let line = bytes[start..<end]
            start = end + 1
            if line.isEmpty || line.first == UInt8(ascii: "#") { continue }
            body(lineNumber, line)
        }
    }

    private static func decimal(_ digits: ArraySlice<UInt8>) -> Int? {
        guard !digits.isEmpty, digits.count < 10 else { return nil }
        var value = 0
        for digit in digits {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(digit - UInt8(ascii: "0"))
        }
        return value
    }

    static func requireUTF8(_ bytes: [UInt8], path: String) throws {
        guard String(validating: bytes, as: UTF8.self) != nil else {
            throw MIMEDatabaseError(
                code: .malformedText,
                inputFile: path,
                message: "the file is not valid UTF-8; run update-mime-database on its directory to regenerate it"
            )
        }
    }

    // MARK: magic

    /// Parses the binary `MIME-Magic\0\n` format.
    static func parseMagic(_ bytes: [UInt8], path: String, issues: inout [String]) throws -> [MagicSection] {
        guard bytes.starts(with: magicHeader) else {
            throw MIMEDatabaseError(
                code: .magicHeaderMissing,
                inputFile: path,
                message:
                    "the file does not start with MIME-Magic\\0\\n; run update-mime-database on its directory to regenerate it"
            )
        }
        var reader = MagicReader(bytes: bytes, position: magicHeader.count, path: path)
        var sections: [MagicSection] = []
        while !reader.atEnd {
            if reader.peek() == UInt8(ascii: "[") {
                sections.append(try reader.readSectionHeader())
                continue
            }
            guard !sections.isEmpty else {
                throw reader.malformed("a rule appears before the first [priority:type] section")
            }
            let lineStart = reader.position
            let outcome = try reader.readRule()
            switch outcome {
            case .rule(var rule):
                let previousIndent = sections[sections.count - 1].rules.last?.indent ?? -1
                // A rule may nest at most one level deeper than the one before it; deeper would
                // have no parent, so it is attached to the previous rule instead of being lost.
                if rule.indent > previousIndent + 1 {
                    issues.append("\(path): byte \(lineStart): rule indent \(rule.indent) skips a level")
                    rule.indent = previousIndent + 1
                }
                if rule.indent == 0, rule.offset == 0, rule.mask == nil, rule.rangeLength == 1,
                    rule.value == noMagicValue
                {
                    sections[sections.count - 1].deletesEarlierMagic = true
                } else {
                    sections[sections.count - 1].rules.append(rule)
                }
            case .skipped(let reason):
                issues.append("\(path): byte \(lineStart): rule skipped: \(reason)")
            }
        }
        return sections.filter { !$0.rules.isEmpty || $0.deletesEarlierMagic }
    }
}

/// A cursor over the bytes of a `magic` file.
private struct MagicReader {
    enum RuleOutcome {
        case rule(MIMEDatabaseLayer.MagicRule)
        /// The line held an extension this reader does not know; the spec says to ignore the line.
        case skipped(String)
    }

    let bytes: [UInt8]
    var position: Int
    let path: String

    var atEnd: Bool { position >= bytes.count }

    func peek() -> UInt8? {
        position < bytes.count ? bytes[position] : nil
    }

    func malformed(_ what: String) -> MIMEDatabaseError {
        MIMEDatabaseError(
            code: .malformedMagic,
            inputFile: path,
            message: "\(what) at byte \(position); run update-mime-database on its directory to regenerate it"
        )
    }

    mutating func expect(_ byte: UInt8, _ what: String) throws {
        guard peek() == byte else { throw malformed("expected \(what)") }
        position += 1
    }

    /// Reads decimal digits; `nil` when there are none.
    mutating func readNumber() throws -> Int? {
        var value = 0
        var digits = 0
        while let byte = peek(), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
            digits += 1
            position += 1
            if value > MIMEDatabaseLayer.magicNumberLimit { throw malformed("number too large") }
        }
        return digits == 0 ? nil : value
    }

    mutating func readBytes(_ count: Int) throws -> [UInt8] {
        guard count <= bytes.count - position else { throw malformed("value runs past the end of the file") }
        defer { position += count }
        return Array(bytes[position..<position + count])
    }

    mutating func readSectionHeader() throws -> MIMEDatabaseLayer.MagicSection {
        try expect(UInt8(ascii: "["), "'['")
        guard let priority = try readNumber() else { throw malformed("expected a section priority") }
        try expect(UInt8(ascii: ":"), "':' after the section priority")
        let typeStart = position
        while let byte = peek(), byte != UInt8(ascii: "]"), byte != UInt8(ascii: "\n") {
            position += 1
        }
        let typeBytes = bytes[typeStart..<position]
        try expect(UInt8(ascii: "]"), "']' closing the section header")
        try expect(UInt8(ascii: "\n"), "a newline after the section header")
        guard let type = String(validating: typeBytes, as: UTF8.self), type.contains("/") else {
            throw malformed("section type is not a MIME type")
        }
        return MIMEDatabaseLayer.MagicSection(priority: priority, type: type, rules: [], deletesEarlierMagic: false)
    }

    mutating func readRule() throws -> RuleOutcome {
        let indent = try readNumber() ?? 0
        try expect(UInt8(ascii: ">"), "'>' starting a rule")
        guard let offset = try readNumber() else { throw malformed("expected a start offset") }
        try expect(UInt8(ascii: "="), "'=' after the start offset")
        let lengthBytes = try readBytes(2)
        let length = Int(lengthBytes[0]) << 8 | Int(lengthBytes[1])
        var value = try readBytes(length)
        var mask: [UInt8]?
        var wordSize = 1
        var rangeLength = 1
        if peek() == UInt8(ascii: "&") {
            position += 1
            mask = try readBytes(length)
        }
        if peek() == UInt8(ascii: "~") {
            position += 1
            guard let size = try readNumber() else { throw malformed("expected a word size after '~'") }
            wordSize = size
        }
        if peek() == UInt8(ascii: "+") {
            position += 1
            guard let range = try readNumber() else { throw malformed("expected a range length after '+'") }
            rangeLength = range
        }
        if peek() != UInt8(ascii: "\n") {
            // Unknown extension: no binary data follows it, so the next line starts after the next newline.
            while let byte = peek(), byte != UInt8(ascii: "\n") { position += 1 }
            guard !atEnd else { throw malformed("rule line is not terminated by a newline") }
            position += 1
            return .skipped("unknown field")
        }
        position += 1
        guard rangeLength >= 1 else { return .skipped("range length 0") }
        if wordSize > 1 {
            value = Self.hostOrder(value, wordSize: wordSize)
            mask = mask.map { Self.hostOrder($0, wordSize: wordSize) }
        }
        return .rule(
            MIMEDatabaseLayer.MagicRule(
                indent: indent,
                offset: offset,
                rangeLength: rangeLength,
                value: value,
                mask: mask
            )
        )
    }

    /// The file stores `host16`/`host32` values big-endian; little-endian hosts reverse each word.
    static func hostOrder(_ bytes: [UInt8], wordSize: Int) -> [UInt8] {
        #if _endian(big)
            return bytes
        #else
            guard bytes.count % wordSize == 0 else { return bytes }
            var swapped = bytes
            var start = 0
            while start < bytes.count {
                for index in 0..<wordSize {
                    swapped[start + index] = bytes[start + wordSize - 1 - index]
                }
                start += wordSize
            }
            return swapped
        #endif
    }
}
