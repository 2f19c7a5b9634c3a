/// RFC 2047 encoded words (`=?charset?B?…?=`, `=?charset?Q?…?=`) in header text.
///
/// Whitespace between two adjacent encoded words is dropped, and adjacent words in one charset are
/// joined before decoding, so a UTF-8 character split across two words comes out whole. A word in a
/// charset nobody knows is read as UTF-8 when its bytes are valid UTF-8 and as Windows-1252 otherwise;
/// a malformed word stays as written. Decoding never fails.
package enum EncodedWords {
    /// The longest encoded word taken as one; longer ones stay as written. RFC 2047 allows 75
    /// bytes; the bound also keeps a header full of unterminated `=?x?q?` starts linear.
    static let maximumWordLength = 1000

    enum Segment {
        case text(ArraySlice<UInt8>)
        case word(charset: String, bytes: [UInt8])

        var isWord: Bool {
            if case .word = self { true } else { false }
        }
    }

    /// Decodes the encoded words of unfolded header text; other bytes are read as UTF-8, or as
    /// Windows-1252 when they are not valid UTF-8.
    package static func decode(_ text: some Collection<UInt8>) -> String {
        let bytes = Array(text)
        var segments: [Segment] = []
        var literalStart = 0
        var index = 0
        while index + 1 < bytes.count {
            if bytes[index] == 0x3D, bytes[index + 1] == 0x3F, let (word, end) = parseWord(bytes, at: index) {
                if literalStart < index { segments.append(.text(bytes[literalStart..<index])) }
                segments.append(word)
                index = end
                literalStart = end
            } else {
                index += 1
            }
        }
        if literalStart < bytes.count { segments.append(.text(bytes[literalStart...])) }
        return render(segments)
    }

    /// ``decode(_:)`` for text that is already a `String`.
    package static func decode(_ text: String) -> String {
        decode(Array(text.utf8))
    }

    static func render(_ segments: [Segment]) -> String {
        var result = ""
        var pendingCharset: String?
        var pendingBytes: [UInt8] = []
        func flush() {
            if let charset = pendingCharset { result += MailCharset.decodeLeniently(pendingBytes, label: charset) }
            pendingCharset = nil
            pendingBytes.removeAll()
        }
        for (position, segment) in segments.enumerated() {
            switch segment {
            case .text(let literal):
                let betweenWords = position > 0 && position + 1 < segments.count
                    && segments[position - 1].isWord && segments[position + 1].isWord
                if betweenWords, literal.allSatisfy(isSpace) { continue }
                flush()
                result += MailCharset.decodeUnlabelled(literal)
            case .word(let charset, let bytes):
                if let pending = pendingCharset, pending.lowercased() != charset.lowercased() { flush() }
                pendingCharset = charset
                pendingBytes += bytes
            }
        }
        flush()
        return result
    }

    /// The word starting at `start` (`=?`) and the index after it, or nil when none starts there.
    static func parseWord(_ bytes: [UInt8], at start: Int) -> (Segment, Int)? {
        var index = start + 2
        let charsetStart = index
        while index < bytes.count, bytes[index] != 0x3F {
            if isSpace(bytes[index]) || index - charsetStart > 64 { return nil }
            index += 1
        }
        guard index > charsetStart, index + 2 < bytes.count, bytes[index + 2] == 0x3F else { return nil }
        let charset = String(decoding: bytes[charsetStart..<index], as: UTF8.self)
        let encoding = bytes[index + 1] | 0x20
        guard encoding == 0x62 || encoding == 0x71 else { return nil } // b or q
        let textStart = index + 3
        var end = textStart
        while end + 1 < bytes.count, !(bytes[end] == 0x3F && bytes[end + 1] == 0x3D) {
            if bytes[end] == 0x0D || bytes[end] == 0x0A || end - textStart > maximumWordLength { return nil }
            end += 1
        }
        guard end + 1 < bytes.count else { return nil }
        let encoded = bytes[textStart..<end]
        let decoded: [UInt8]
        if encoding == 0x62 {
            guard let value = decodeBase64(encoded) else { return nil }
            decoded = value
        } else {
            decoded = decodeQ(encoded)
        }
        return (.word(charset: charset, bytes: decoded), end + 2)
    }

    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A
    }

    /// Lenient base64 for one word: missing padding is fine, a lone final character is not.
    static func decodeBase64(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        var decoder = Base64StreamDecoder()
        var output = [UInt8](repeating: 0, count: text.count + 3)
        var produced = text.withUnsafeBytes { input in
            output.withUnsafeMutableBytes { decoder.decode(input, into: $0.baseAddress!) }
        }
        let ending = output.withUnsafeMutableBytes { decoder.finish(into: $0.baseAddress! + produced) }
        produced += ending.produced
        if decoder.leftoverIsUnusable { return nil }
        return Array(output[..<produced])
    }

    /// RFC 2047 "Q": `_` is a space, `=XX` a byte; anything else stands for itself.
    static func decodeQ(_ text: ArraySlice<UInt8>) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(text.count)
        var index = text.startIndex
        while index < text.endIndex {
            let byte = text[index]
            if byte == 0x5F {
                result.append(0x20)
            } else if byte == 0x3D, index + 2 < text.endIndex,
                      let high = hexValue(text[index + 1]), let low = hexValue(text[index + 2]) {
                result.append(high << 4 | low)
                index += 2
            } else {
                result.append(byte)
            }
            index += 1
        }
        return result
    }
}

/// The value of one hexadecimal digit, either case.
func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case 0x30...0x39: byte - 0x30
    case 0x41...0x46: byte - 0x41 + 10
    case 0x61...0x66: byte - 0x61 + 10
    default: nil
    }
}
