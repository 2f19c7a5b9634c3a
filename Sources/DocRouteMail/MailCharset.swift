/// A charset named in mail (an RFC 2047 encoded word, an RFC 2231 parameter) and the text its bytes stand for.
///
/// UTF-8, US-ASCII, the ISO-8859 family, the Windows code pages, KOI8, IBM 866 and Mac Roman are
/// decoded here from tables (no Foundation, no locale, no files). Multi-byte East Asian charsets are
/// not known: ``init(label:)`` returns nil for them and callers fall back as ``decodeLeniently(_:label:)`` does.
package struct MailCharset: Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        case utf8
        /// US-ASCII: 8-bit bytes in it are someone's mistake; they are read as UTF-8 or Windows-1252.
        case ascii
        /// ISO-8859-1 is read as Windows-1252, as browsers do: mail labelled Latin-1 routinely holds
        /// Windows quotes and dashes in the C1 range.
        case latin1
        case table(String)
        case utf7
    }

    let kind: Kind

    /// The canonical name (`utf-8`, `iso-8859-2`, `windows-1251`, …).
    package let name: String

    /// The charset a label names, or nil when it is not one this library decodes. Labels are matched
    /// case-insensitively with the usual aliases (`latin1`, `cp1252`, `iso8859-15`, `utf8`, an RFC 2231
    /// language suffix such as `utf-8*en`).
    package init?(label: some StringProtocol) {
        var text = String(label).lowercased()
        if let star = text.firstIndex(of: "*") { text = String(text[..<star]) }
        text = text.trimmingASCIIWhitespace()
        guard let name = Self.canonicalName(text) else { return nil }
        self.name = name
        switch name {
        case "utf-8": kind = .utf8
        case "us-ascii": kind = .ascii
        case "iso-8859-1": kind = .latin1
        case "utf-7": kind = .utf7
        default: kind = .table(name)
        }
    }

    /// The text `bytes` stand for in this charset, or nil when they are not valid in it (only UTF-8
    /// and UTF-7 can be invalid; table charsets map undefined bytes to U+FFFD).
    package func decode(_ bytes: some Collection<UInt8>) -> String? {
        switch kind {
        case .utf8:
            return Self.validUTF8(bytes)
        case .ascii:
            return Self.validUTF8(bytes) ?? Self.decodeTable(bytes, "windows-1252")
        case .latin1:
            return Self.decodeTable(bytes, "windows-1252", keepingUndefined: true)
        case .table(let name):
            return Self.decodeTable(bytes, name)
        case .utf7:
            return ModifiedUTF7.decode(Array(bytes), variant: .standard)
        }
    }

    /// Text for bytes labelled `label`: decoded in that charset when it is known and the bytes are
    /// valid in it; otherwise UTF-8 if the bytes are valid UTF-8; otherwise Windows-1252. Never fails.
    package static func decodeLeniently(_ bytes: some Collection<UInt8>, label: some StringProtocol) -> String {
        if let charset = MailCharset(label: label), let text = charset.decode(bytes) { return text }
        return decodeUnlabelled(bytes)
    }

    /// Text for bytes with no label (raw 8-bit header text): UTF-8 when valid, otherwise Windows-1252.
    package static func decodeUnlabelled(_ bytes: some Collection<UInt8>) -> String {
        validUTF8(bytes) ?? decodeTable(bytes, "windows-1252", keepingUndefined: true)
    }

    static func validUTF8(_ bytes: some Collection<UInt8>) -> String? {
        var text = ""
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): text.unicodeScalars.append(scalar)
            case .emptyInput: return text
            case .error: return nil
            }
        }
    }

    /// Decodes with the upper half of `table`; with `keepingUndefined`, an undefined byte becomes the
    /// code point of the same number (Latin-1's reading) rather than U+FFFD.
    static func decodeTable(_ bytes: some Collection<UInt8>, _ table: String, keepingUndefined: Bool = false) -> String {
        let upper = upperHalfScalars[table] ?? []
        var text = ""
        text.unicodeScalars.reserveCapacity(bytes.count)
        for byte in bytes {
            if byte < 0x80 || upper.count != 128 {
                text.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let scalar = upper[Int(byte) - 0x80]
                text.unicodeScalars.append(scalar == "\u{FFFD}" && keepingUndefined ? Unicode.Scalar(byte) : scalar)
            }
        }
        return text
    }

    static let upperHalfScalars: [String: [Unicode.Scalar]] = upperHalves.mapValues { Array($0.unicodeScalars) }

    /// The canonical name for a lowercased label, or nil.
    static func canonicalName(_ label: String) -> String? {
        switch label {
        case "utf-8", "utf8", "unicode-1-1-utf-8", "x-unicode20utf8": return "utf-8"
        case "us-ascii", "ascii", "ansi_x3.4-1968", "iso646-us", "us", "iso-ir-6", "cp367", "ibm367": return "us-ascii"
        case "iso-8859-1", "iso8859-1", "iso_8859-1", "iso_8859-1:1987", "latin1", "latin-1", "l1", "cp819",
             "ibm819", "iso-ir-100", "iso88591", "8859-1": return "iso-8859-1"
        case "utf-7", "utf7", "unicode-1-1-utf-7": return "utf-7"
        case "koi8-r", "koi8r", "koi8", "cskoi8r": return "koi8-r"
        case "koi8-u", "koi8u": return "koi8-u"
        case "ibm866", "cp866", "866", "csibm866": return "ibm866"
        case "macintosh", "mac", "macroman", "x-mac-roman", "csmacintosh": return "macintosh"
        case "latin2", "l2": return "iso-8859-2"
        case "latin3", "l3": return "iso-8859-3"
        case "latin4", "l4": return "iso-8859-4"
        case "cyrillic": return "iso-8859-5"
        case "arabic": return "iso-8859-6"
        case "greek", "greek8": return "iso-8859-7"
        case "hebrew": return "iso-8859-8"
        case "latin5", "l5": return "iso-8859-9"
        case "latin6", "l6": return "iso-8859-10"
        case "tis-620", "tis620": return "iso-8859-11"
        case "latin7", "l7": return "iso-8859-13"
        case "latin8", "l8": return "iso-8859-14"
        case "latin9", "l9", "latin-9": return "iso-8859-15"
        case "latin10", "l10": return "iso-8859-16"
        case "windows-874", "cp874", "x-cp874": return "windows-874"
        default: break
        }
        // iso-8859-N in its spellings: iso8859-2, iso_8859-2, iso-8859-2:1987, iso88592, 8859-2.
        for prefix in ["iso-8859-", "iso_8859-", "iso8859-", "iso8859_", "iso-8859_", "8859-", "iso8859"] where label.hasPrefix(prefix) {
            var number = label.dropFirst(prefix.count)
            if let colon = number.firstIndex(of: ":") { number = number[..<colon] }
            if let value = Int(number), value >= 1, value <= 16, value != 12 {
                let name = "iso-8859-\(value)"
                return value == 1 || upperHalves[name] != nil ? name : nil
            }
        }
        // windows-125N and cp125N.
        for prefix in ["windows-", "x-cp", "cp", "win-", "win"] where label.hasPrefix(prefix) {
            if let value = Int(label.dropFirst(prefix.count)), value >= 1250, value <= 1258 {
                return "windows-\(value)"
            }
        }
        return nil
    }
}

extension String {
    func trimmingASCIIWhitespace() -> String {
        let bytes = Array(utf8)
        var start = 0
        var end = bytes.count
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }
}
