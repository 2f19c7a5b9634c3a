/// The spec's last resort: does a file's head look like text or like binary data?
///
/// Text means: no ASCII control character other than whitespace (tab, line feed, vertical
/// tab, form feed, carriage return) or backspace in the first ``controlWindow`` bytes, and
/// valid UTF-8 in the first ``utf8Window`` bytes. Backspace is allowed because formatted
/// man pages use it for overstriking, and GIO allows it for the same reason. A multi-byte
/// sequence cut off by the end of the window is accepted: the head is only a prefix.
public enum MIMETextSniffer {
    /// How many leading bytes are checked for control characters (the spec suggests 128).
    public static let controlWindow = 128
    /// How many leading bytes must be valid UTF-8.
    public static let utf8Window = 4096

    /// Whether `head` looks like text. An empty head counts as text, as in GIO.
    public static func looksLikeText(_ head: [UInt8]) -> Bool {
        head.withUnsafeBytes { looksLikeText($0) }
    }

    /// Whether `head` looks like text. An empty head counts as text, as in GIO.
    public static func looksLikeText(_ head: UnsafeRawBufferPointer) -> Bool {
        let controlEnd = min(head.count, controlWindow)
        for index in 0..<controlEnd {
            let byte = head[index]
            if byte == 0x7F { return false }
            if byte < 0x20, !(0x08...0x0D).contains(byte) { return false }
        }
        return isValidUTF8Prefix(UnsafeRawBufferPointer(rebasing: head.prefix(utf8Window)))
    }

    /// RFC 3629 validation (no overlongs, surrogates or values past U+10FFFF) that accepts an
    /// incomplete sequence at the very end.
    static func isValidUTF8Prefix(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let count = bytes.count
        var index = 0
        while index < count {
            // ASCII runs are the common case; skip them eight bytes at a time.
            while index + 8 <= count,
                bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0
            {
                index += 8
            }
            guard index < count else { break }
            let lead = bytes[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            // RFC 3629 table: the allowed range of the second byte depends on the lead byte.
            let (length, secondLow, secondHigh): (Int, UInt8, UInt8)
            switch lead {
            case 0xC2...0xDF: (length, secondLow, secondHigh) = (2, 0x80, 0xBF)
            case 0xE0: (length, secondLow, secondHigh) = (3, 0xA0, 0xBF)
            case 0xE1...0xEC, 0xEE...0xEF: (length, secondLow, secondHigh) = (3, 0x80, 0xBF)
            case 0xED: (length, secondLow, secondHigh) = (3, 0x80, 0x9F)
            case 0xF0: (length, secondLow, secondHigh) = (4, 0x90, 0xBF)
            case 0xF1...0xF3: (length, secondLow, secondHigh) = (4, 0x80, 0xBF)
            case 0xF4: (length, secondLow, secondHigh) = (4, 0x80, 0x8F)
            default: return false
            }
            for offset in 1..<length {
                guard index + offset < count else { return true }
                let byte = bytes[index + offset]
                let low = offset == 1 ? secondLow : 0x80
                let high = offset == 1 ? secondHigh : 0xBF
                guard byte >= low, byte <= high else { return false }
            }
            index += length
        }
        return true
    }
}
