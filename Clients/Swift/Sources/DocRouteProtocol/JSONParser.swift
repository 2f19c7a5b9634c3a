/// Reads one JSON text (RFC 8259) straight into a ``JSONValue``.
///
/// Every protocol line is parsed into a `JSONValue` before its fields are read. Going through
/// `JSONDecoder` did that by trying each kind in turn (`Bool`, then `Int64`, `Double`, `String`,
/// array, object) and catching the `DecodingError` of each wrong guess: in a burst that was 8% of
/// the daemon's time, for lines of a hundred bytes. This reads the bytes once.
///
/// It gives what `JSONDecoder` gave for the same text (`JSONParserTests` compares the two): a
/// number is an integer when it is one exactly (`1.0` and `1e2` too) and fits in 64 bits, else a
/// real; the first of duplicate keys counts; a string escape must form valid UTF-16 (no
/// lone surrogates); control characters must be escaped; nothing but white space may follow the
/// value; like JSONDecoder it lets a comma end an array or object (`[1,]`), which RFC 8259 does
/// not, so that no client that worked before is refused now. Nesting deeper than ``maximumDepth`` is refused rather than followed on the stack.
struct JSONParser {
    /// Why a text is not JSON, and at which byte offset.
    struct Failure: Error, CustomStringConvertible {
        var reason: String
        var offset: Int
        var description: String { "\(reason) at byte \(offset)" }
    }

    /// Arrays and objects nested deeper than this are refused (`JSONDecoder` stops at 512 too).
    static let maximumDepth = 512

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    private var depth = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// Parses `text`, which must hold exactly one JSON value with optional white space around it.
    static func parse(_ text: some Collection<UInt8>) throws(Failure) -> JSONValue {
        let result: Result<JSONValue, Failure>? = text.withContiguousStorageIfAvailable { buffer in
            Result { () throws(Failure) -> JSONValue in try parse(buffer: buffer) }
        }
        if let result { return try result.get() }
        return try Array(text).withUnsafeBufferPointer { buffer throws(Failure) in try parse(buffer: buffer) }
    }

    private static func parse(buffer: UnsafeBufferPointer<UInt8>) throws(Failure) -> JSONValue {
        var parser = JSONParser(buffer)
        parser.skipWhitespace()
        let value = try parser.value()
        parser.skipWhitespace()
        guard parser.index == buffer.count else { throw parser.failure("unexpected text after the value") }
        return value
    }

    private func failure(_ reason: String) -> Failure { Failure(reason: reason, offset: index) }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
    }

    private mutating func value() throws(Failure) -> JSONValue {
        guard let byte = current else { throw failure("unexpected end of text") }
        switch byte {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw failure("unexpected character")
        }
    }

    private mutating func literal(_ word: String) throws(Failure) {
        for expected in word.utf8 {
            guard let byte = current else { throw failure("unexpected end of text") }
            guard byte == expected else { throw failure("unexpected character") }
            index += 1
        }
    }

    private mutating func enter() throws(Failure) {
        depth += 1
        guard depth <= Self.maximumDepth else { throw failure("nested deeper than \(Self.maximumDepth) levels") }
    }

    private mutating func object() throws(Failure) -> JSONValue {
        var members: [String: JSONValue] = [:]
        try items(closing: UInt8(ascii: "}"), of: "an object") { parser throws(Failure) in
            guard parser.current == UInt8(ascii: "\"") else { throw parser.failure("expected a member name in quotes") }
            let key = try parser.string()
            parser.skipWhitespace()
            guard parser.current == UInt8(ascii: ":") else { throw parser.failure("expected ':' after a member name") }
            parser.index += 1
            parser.skipWhitespace()
            let member = try parser.value()
            if members[key] == nil { members[key] = member }
        }
        return .object(members)
    }

    private mutating func array() throws(Failure) -> JSONValue {
        var elements: [JSONValue] = []
        try items(closing: UInt8(ascii: "]"), of: "an array") { parser throws(Failure) in elements.append(try parser.value()) }
        return .array(elements)
    }

    /// Reads the members or elements of an object or array (`index` at its opening bracket), each
    /// by `item`, up to and past `closing`. A comma may come before the closing bracket.
    private mutating func items(closing: UInt8, of kind: String, _ item: (inout JSONParser) throws(Failure) -> Void) throws(Failure) {
        try enter()
        index += 1
        skipWhitespace()
        while current != closing {
            try item(&self)
            skipWhitespace()
            if current == UInt8(ascii: ",") {
                index += 1
                skipWhitespace()
            } else if current != closing {
                throw failure("expected ',' or '\(Character(Unicode.Scalar(closing)))' in \(kind)")
            }
        }
        index += 1
        depth -= 1
    }

    /// A string; `index` is at its opening quote. The bytes are valid UTF-8 (the caller checked).
    private mutating func string() throws(Failure) -> String {
        index += 1
        let start = index
        // The common case: no escapes, so the string is a slice of the line.
        while let byte = current, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
            guard byte >= 0x20 else { throw failure("a control character in a string must be escaped") }
            index += 1
        }
        guard let stop = current else { throw failure("unterminated string") }
        if stop == UInt8(ascii: "\"") {
            index += 1
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index - 1]), as: UTF8.self)
        }
        var scalars = Array(bytes[start..<index])
        while true {
            guard let byte = current else { throw failure("unterminated string") }
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return String(decoding: scalars, as: UTF8.self)
            case UInt8(ascii: "\\"):
                index += 1
                try escape(into: &scalars)
            case ..<0x20:
                throw failure("a control character in a string must be escaped")
            default:
                scalars.append(byte)
                index += 1
            }
        }
    }

    private mutating func escape(into output: inout [UInt8]) throws(Failure) {
        guard let byte = current else { throw failure("unterminated string") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): output.append(byte)
        case UInt8(ascii: "b"): output.append(0x08)
        case UInt8(ascii: "f"): output.append(0x0C)
        case UInt8(ascii: "n"): output.append(0x0A)
        case UInt8(ascii: "r"): output.append(0x0D)
        case UInt8(ascii: "t"): output.append(0x09)
        case UInt8(ascii: "u"):
            var unit = UInt32(try hexUnit())
            if (0xD800...0xDBFF).contains(unit) {
                // A high surrogate must be followed by an escaped low one.
                guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw failure("a \\u escape of a high surrogate without its low surrogate")
                }
                index += 2
                let low = UInt32(try hexUnit())
                guard (0xDC00...0xDFFF).contains(low) else { throw failure("a high surrogate followed by something else than a low one") }
                unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(unit) {
                throw failure("a \\u escape of a low surrogate without its high surrogate")
            }
            guard let scalar = Unicode.Scalar(unit) else { throw failure("an invalid \\u escape") }
            output.append(contentsOf: UTF8.encode(scalar)!)
        default:
            throw failure("an invalid escape in a string")
        }
    }

    private mutating func hexUnit() throws(Failure) -> UInt16 {
        guard bytes.count - index >= 4 else { throw failure("a \\u escape needs four hex digits") }
        var unit: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("a \\u escape needs four hex digits")
            }
            unit = unit << 4 | UInt16(digit)
            index += 1
        }
        return unit
    }

    /// A number as the grammar has it: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    private mutating func number() throws(Failure) -> JSONValue {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
            throw failure("a number needs a digit")
        }
        if first == UInt8(ascii: "0") {
            index += 1
        } else {
            skipDigits()
        }
        var integral = true
        if current == UInt8(ascii: ".") {
            integral = false
            index += 1
            guard try digitsFollow() else { throw failure("a number needs a digit after '.'") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            integral = false
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard try digitsFollow() else { throw failure("a number needs a digit in its exponent") }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        if integral, let integer = Int64(text) { return .integer(integer) }
        // A fraction or exponent that comes out whole is an integer, worked out exactly from the
        // digits (as JSONDecoder did: `90071992547409e3` is 90071992547409000, which a Double
        // cannot hold), else through a Double; digits alone that do not fit in 64 bits are a real.
        if !integral, let integer = Self.exactInteger(UnsafeBufferPointer(rebasing: bytes[start..<index])) {
            return .integer(integer)
        }
        guard let real = Double(text), real.isFinite else { throw failure("a number out of range") }
        // What a Double makes whole counts too (`1e-400` is 0), but not for digits alone.
        if !integral, let integer = Int64(exactly: real) { return .integer(integer) }
        return .real(real)
    }

    /// The integer a number with a fraction or exponent stands for, if it is one and fits.
    private static func exactInteger(_ text: UnsafeBufferPointer<UInt8>) -> Int64? {
        var negative = false, mantissa: Int64 = 0, scale = 0, exponent = 0, exponentNegative = false
        var part = 0  // 0 integer digits, 1 fraction digits, 2 exponent digits
        for byte in text {
            switch byte {
            case UInt8(ascii: "-") where part == 0: negative = true
            case UInt8(ascii: "-"): exponentNegative = true
            case UInt8(ascii: "+"): break
            case UInt8(ascii: "."): part = 1
            case UInt8(ascii: "e"), UInt8(ascii: "E"): part = 2
            default:
                let digit = Int64(byte - UInt8(ascii: "0"))
                if part == 2 {
                    exponent = exponent * 10 + Int(digit)
                    if exponent > 400 { return nil }
                } else {
                    let (shifted, overflow) = mantissa.multipliedReportingOverflow(by: 10)
                    guard !overflow, case let (sum, carry) = shifted.addingReportingOverflow(digit), !carry else { return nil }
                    mantissa = sum
                    if part == 1 { scale += 1 }
                }
            }
        }
        var power = (exponentNegative ? -exponent : exponent) - scale
        while power < 0 {
            guard mantissa % 10 == 0 else { return nil }
            mantissa /= 10
            power += 1
        }
        while power > 0 {
            let (shifted, overflow) = mantissa.multipliedReportingOverflow(by: 10)
            guard !overflow else { return nil }
            mantissa = shifted
            power -= 1
        }
        return negative ? -mantissa : mantissa
    }

    private mutating func digitsFollow() throws(Failure) -> Bool {
        guard let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return false }
        skipDigits()
        return true
    }

    private mutating func skipDigits() {
        while let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { index += 1 }
    }
}
