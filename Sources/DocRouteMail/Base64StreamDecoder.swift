/// Base64 decoding across chunk boundaries, tolerant of line breaks and stray characters.
///
/// Whitespace is skipped; characters outside the alphabet are skipped and counted; `=` ends a
/// quantum (and decoding carries on after it, as concatenated encodings need). Input that stops
/// inside a quantum is reported by ``finish(into:)``: two or three characters still give their whole
/// bytes (only the `=` padding is missing); one character is bits lost (``leftoverIsUnusable``).
struct Base64StreamDecoder {
    private var accumulator: UInt32 = 0
    private var pending = 0
    /// Characters that are neither base64, padding nor whitespace.
    private(set) var invalidCharacters = 0
    /// A `=` came after a single character of a quantum: six bits were lost.
    private(set) var brokenPadding = false

    static let padding: UInt8 = 64
    static let whitespace: UInt8 = 65
    static let invalid: UInt8 = 255

    /// Byte to sextet (or ``padding``, ``whitespace``, ``invalid``): a value, copied into the
    /// decoding loop's frame, so the hot loop reads it without a closure (whose captured locals the
    /// optimiser cannot keep in registers) and nothing is shared between threads.
    static let alphabet: InlineArray<256, UInt8> = {
        var table = InlineArray<256, UInt8>(repeating: invalid)
        for (value, character) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(character)] = UInt8(value)
        }
        table[Int(UInt8(ascii: "="))] = padding
        for space in [0x20, 0x09, 0x0D, 0x0A, 0x0B, 0x0C] { table[space] = whitespace }
        return table
    }()

    /// The most bytes ``decode(_:into:)`` writes for `count` input bytes.
    static func maximumOutput(forInput count: Int) -> Int { count / 4 * 3 + 3 }

    /// Decodes `input`, writing to `output` (room for ``maximumOutput(forInput:)`` bytes); returns
    /// the number of bytes written.
    mutating func decode(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer) -> Int {
        guard let base = input.baseAddress, input.count > 0 else { return 0 }
        let source = base.assumingMemoryBound(to: UInt8.self)
        let target = output.assumingMemoryBound(to: UInt8.self)
        let end = input.count
        var accumulator = self.accumulator
        var pending = self.pending
        var invalid = 0
        var written = 0
        var index = 0
        let table = Self.alphabet
        while index < end {
            // The common case, runs of four alphabet characters at a quantum start, decoded in a
            // tight loop (wrapping arithmetic: the indices are bounded by `end`).
            if pending == 0 {
                while index &+ 4 <= end {
                    let a = table[Int(source[index])], b = table[Int(source[index &+ 1])]
                    let c = table[Int(source[index &+ 2])], d = table[Int(source[index &+ 3])]
                    guard a | b | c | d < 64 else { break }
                    let value = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                    target[written] = UInt8(truncatingIfNeeded: value >> 16)
                    target[written &+ 1] = UInt8(truncatingIfNeeded: value >> 8)
                    target[written &+ 2] = UInt8(truncatingIfNeeded: value)
                    written &+= 3
                    index &+= 4
                }
                guard index < end else { break }
            }
            let value = table[Int(source[index])]
            index += 1
            if value < 64 {
                accumulator = accumulator << 6 | UInt32(value)
                pending += 1
                if pending == 4 {
                    target[written] = UInt8(truncatingIfNeeded: accumulator >> 16)
                    target[written + 1] = UInt8(truncatingIfNeeded: accumulator >> 8)
                    target[written + 2] = UInt8(truncatingIfNeeded: accumulator)
                    written += 3
                    pending = 0
                    accumulator = 0
                }
            } else if value == Self.padding {
                written += Self.flushPartial(accumulator, pending, into: target + written)
                if pending == 1 { brokenPadding = true }
                pending = 0
                accumulator = 0
            } else if value != Self.whitespace {
                invalid += 1
            }
        }
        self.accumulator = accumulator
        self.pending = pending
        invalidCharacters += invalid
        return written
    }

    /// Ends the input: writes what a partial final quantum holds (at most 2 bytes). `unpadded` when
    /// the input stopped after two or three characters of a quantum, without its `=` padding: the
    /// bytes are whole, as a decoder that adds the padding back finds them.
    mutating func finish(into output: UnsafeMutableRawPointer) -> (produced: Int, unpadded: Bool) {
        let unpadded = pending == 2 || pending == 3
        let produced = Self.flushPartial(accumulator, pending, into: output.assumingMemoryBound(to: UInt8.self))
        if pending == 1 { brokenPadding = true }
        pending = 0
        accumulator = 0
        return (produced, unpadded)
    }

    /// Whether the last ``finish(into:)`` or a `=` found a quantum of one character: bits were lost.
    var leftoverIsUnusable: Bool { brokenPadding }

    /// The whole bytes in a quantum of `pending` (2 or 3) characters.
    private static func flushPartial(_ accumulator: UInt32, _ pending: Int, into target: UnsafeMutablePointer<UInt8>) -> Int {
        switch pending {
        case 2:
            target[0] = UInt8(truncatingIfNeeded: accumulator >> 4)
            return 1
        case 3:
            target[0] = UInt8(truncatingIfNeeded: accumulator >> 10)
            target[1] = UInt8(truncatingIfNeeded: accumulator >> 2)
            return 2
        default:
            return 0
        }
    }
}
