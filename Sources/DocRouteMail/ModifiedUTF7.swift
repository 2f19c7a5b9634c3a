/// UTF-7 decoding: IMAP's modified form for mailbox names (RFC 3501 §5.1.3) and the standard form
/// of RFC 2152 (a mail charset).
///
/// IMAP: `&` starts a base64 run of UTF-16BE code units written with `,` instead of `/` and ended by
/// `-`; `&-` is a literal `&`. `&AOk-t&AOk-` is `été`.
package enum ModifiedUTF7 {
    /// Which UTF-7.
    package enum Variant: Sendable {
        /// RFC 3501 mailbox names.
        case imap
        /// RFC 2152, the `utf-7` charset.
        case standard
    }

    /// The text of `bytes`, or nil when they are not valid in `variant` (a bad base64 run, a lone
    /// surrogate, leftover bits, an 8-bit byte). Callers keep the raw name then.
    package static func decode(_ bytes: [UInt8], variant: Variant = .imap) -> String? {
        let shift: UInt8 = variant == .imap ? 0x26 : 0x2B // & or +
        var text = ""
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            guard byte < 0x80 else { return nil }
            guard byte == shift else {
                text.unicodeScalars.append(Unicode.Scalar(byte))
                index += 1
                continue
            }
            index += 1
            if index < bytes.count, bytes[index] == 0x2D {
                text.unicodeScalars.append(Unicode.Scalar(shift))
                index += 1
                continue
            }
            // A base64 run of UTF-16BE code units.
            var bits: UInt32 = 0
            var bitCount = 0
            var units: [UInt16] = []
            while index < bytes.count, let value = sextet(bytes[index], variant: variant) {
                bits = (bits << 6) | UInt32(value)
                bitCount += 6
                if bitCount >= 16 {
                    bitCount -= 16
                    units.append(UInt16(truncatingIfNeeded: bits >> UInt32(bitCount)))
                    bits &= (1 << UInt32(bitCount)) - 1
                }
                index += 1
            }
            // Leftover bits must be zero padding shorter than a sextet plus a byte.
            guard bitCount < 6 || variant == .standard, bits == 0, !units.isEmpty else { return nil }
            if index < bytes.count, bytes[index] == 0x2D {
                index += 1
            } else if variant == .imap {
                return nil
            }
            var decoder = UTF16()
            var iterator = units.makeIterator()
            loop: while true {
                switch decoder.decode(&iterator) {
                case .scalarValue(let scalar): text.unicodeScalars.append(scalar)
                case .emptyInput: break loop
                case .error: return nil
                }
            }
        }
        return text
    }

    static func sextet(_ byte: UInt8, variant: Variant) -> UInt8? {
        switch byte {
        case 0x41...0x5A: byte - 0x41
        case 0x61...0x7A: byte - 0x61 + 26
        case 0x30...0x39: byte - 0x30 + 52
        case 0x2B: 62
        case 0x2C: variant == .imap ? 63 : nil
        case 0x2F: variant == .standard ? 63 : nil
        default: nil
        }
    }
}
