/// Quoted-printable decoding (RFC 2045 §6.7) across chunk boundaries.
///
/// `=XX` is a byte, `=` before a line break (with optional spaces between) is a soft line break,
/// line breaks stand for themselves. A `=` that starts no valid escape is kept literally, as most
/// readers do, rather than failing the part.
struct QuotedPrintableStreamDecoder {
    private enum State {
        case text
        case equals
        case equalsSpace
        case equalsHex(UInt8)
        case equalsCR
    }

    private var state = State.text

    /// The most bytes ``decode(_:into:)`` writes for `count` input bytes (a held `=X` comes out too).
    static func maximumOutput(forInput count: Int) -> Int { count + 2 }

    /// Decodes `input` into `output` (room for ``maximumOutput(forInput:)`` bytes); returns the count written.
    mutating func decode(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer) -> Int {
        let target = output.assumingMemoryBound(to: UInt8.self)
        var written = 0
        var state = self.state
        for byte in input {
            var reprocess = true
            while reprocess {
                reprocess = false
                switch state {
                case .text:
                    if byte == 0x3D {
                        state = .equals
                    } else {
                        target[written] = byte
                        written += 1
                    }
                case .equals, .equalsSpace:
                    if case .equals = state, hexValue(byte) != nil {
                        state = .equalsHex(byte)
                    } else if byte == 0x0A {
                        state = .text
                    } else if byte == 0x0D {
                        state = .equalsCR
                    } else if byte == 0x20 || byte == 0x09 {
                        state = .equalsSpace
                    } else {
                        // Not an escape: the `=` stands for itself (spaces after it are dropped).
                        target[written] = 0x3D
                        written += 1
                        state = .text
                        reprocess = true
                    }
                case .equalsHex(let high):
                    if let low = hexValue(byte), let value = hexValue(high) {
                        target[written] = value << 4 | low
                        written += 1
                        state = .text
                    } else {
                        target[written] = 0x3D
                        target[written + 1] = high
                        written += 2
                        state = .text
                        reprocess = true
                    }
                case .equalsCR:
                    // `=` CR LF is the soft break; a bare CR after `=` is taken as one too.
                    state = .text
                    if byte != 0x0A { reprocess = true }
                }
            }
        }
        self.state = state
        return written
    }

    /// Ends the input; writes a held `=X` literally (a final `=` is a soft break and writes nothing).
    mutating func finish(into output: UnsafeMutableRawPointer) -> Int {
        defer { state = .text }
        if case .equalsHex(let high) = state {
            let target = output.assumingMemoryBound(to: UInt8.self)
            target[0] = 0x3D
            target[1] = high
            return 2
        }
        return 0
    }
}
