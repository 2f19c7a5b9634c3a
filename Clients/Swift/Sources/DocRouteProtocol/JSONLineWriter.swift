/// Writes one JSON object as one protocol line, with fields in the order they are written.
///
/// Foundation's `JSONEncoder` does not promise key order, and PROTOCOL.md's examples fix one,
/// so messages are written by hand here. Nested dictionaries (annotations, extra status data)
/// are written with sorted keys so the output is reproducible. Slashes are not escaped and
/// non-ASCII text is written as UTF-8.
struct JSONLineWriter {
    private(set) var bytes: [UInt8] = []
    /// One entry per open object or array: whether the next member needs a comma first.
    private var needsComma: [Bool] = []
    /// Set between a key and its value, which takes no comma.
    private var pendingValueAfterKey = false

    init(capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    /// The finished line, terminated by `\n`.
    consuming func line() -> [UInt8] {
        precondition(needsComma.isEmpty, "unbalanced JSON object or array")
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma.append(false)
    }

    mutating func endObject() {
        needsComma.removeLast()
        bytes.append(UInt8(ascii: "}"))
    }

    mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        needsComma.append(false)
    }

    mutating func endArray() {
        needsComma.removeLast()
        bytes.append(UInt8(ascii: "]"))
    }

    /// Writes `"key":`; the value written next belongs to it.
    mutating func key(_ name: String) {
        separate()
        writeQuoted(name)
        bytes.append(UInt8(ascii: ":"))
        pendingValueAfterKey = true
    }

    mutating func string(_ value: String) {
        separate()
        writeQuoted(value)
    }

    mutating func integer(_ value: some BinaryInteger) {
        separate()
        bytes.append(contentsOf: String(value).utf8)
    }

    /// Non-finite numbers have no JSON form; they are written as the strings `"NaN"`,
    /// `"Infinity"` and `"-Infinity"` so the line stays valid JSON.
    mutating func real(_ value: Double) {
        guard value.isFinite else {
            string(value.isNaN ? "NaN" : (value < 0 ? "-Infinity" : "Infinity"))
            return
        }
        separate()
        bytes.append(contentsOf: value.description.utf8)
    }

    mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    mutating func null() {
        separate()
        bytes.append(contentsOf: "null".utf8)
    }

    mutating func field(_ name: String, _ value: String) {
        key(name)
        string(value)
    }

    mutating func field(_ name: String, ifPresent value: String?) {
        if let value { field(name, value) }
    }

    mutating func field(_ name: String, _ value: Bool) {
        key(name)
        bool(value)
    }

    mutating func field(_ name: String, _ value: Int) {
        key(name)
        integer(value)
    }

    mutating func value(_ value: JSONValue) {
        switch value {
        case .null: null()
        case .bool(let value): bool(value)
        case .integer(let value): integer(value)
        case .real(let value): real(value)
        case .string(let value): string(value)
        case .array(let values):
            beginArray()
            for element in values { self.value(element) }
            endArray()
        case .object(let members):
            beginObject()
            for key in members.keys.sorted() {
                self.key(key)
                self.value(members[key]!)
            }
            endObject()
        }
    }

    mutating func value(_ value: PropertyListValue) {
        switch value {
        case .string(let value): string(value)
        case .integer(let value): integer(value)
        case .real(let value): real(value)
        case .bool(let value): bool(value)
        case .array(let values):
            beginArray()
            for element in values { self.value(element) }
            endArray()
        case .dictionary(let members):
            dictionary(members)
        }
    }

    mutating func dictionary(_ members: [String: PropertyListValue]) {
        beginObject()
        for key in members.keys.sorted() {
            self.key(key)
            value(members[key]!)
        }
        endObject()
    }

    /// Puts a comma between members, except right after a key.
    private mutating func separate() {
        if pendingValueAfterKey {
            pendingValueAfterKey = false
            return
        }
        guard let last = needsComma.last else { return }
        if last { bytes.append(UInt8(ascii: ",")) }
        needsComma[needsComma.count - 1] = true
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private mutating func writeQuoted(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\n"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "\r"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case UInt8(ascii: "\t"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x00..<0x20:
                bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                bytes.append(Self.hexDigits[Int(byte >> 4)])
                bytes.append(Self.hexDigits[Int(byte & 0x0F)])
            default:
                bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
