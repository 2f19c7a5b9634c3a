/// Apple's dynamic type identifiers (`dyn.a…`): what macOS names a tag that no declared type claims.
///
/// The payload is a small text such as `?0=6:1=pdb` ("conforms to public.data, filename extension
/// pdb"), in which well-known keys and values are abbreviated to one character, encoded in base 32
/// (most significant bit first, no padding) with Apple's alphabet that leaves out i, j, l and o,
/// and prefixed with `dyn.a`. Encoding the same tag twice gives the same identifier, byte for byte
/// what macOS gives, so a handler can name such a type in its Info.plist.
public struct DynamicTypeIdentifier: Sendable, Hashable {
    /// The tag classes a dynamic identifier can carry.
    public enum TagClass: String, Sendable, Hashable, CaseIterable {
        case filenameExtension = "public.filename-extension"
        case osType = "com.apple.ostype"
        case mimeType = "public.mime-type"
        case pasteboardType = "com.apple.nspboard-type"
        case urlScheme = "public.url-scheme"
    }

    /// Parent types (usually `public.data`).
    public var conformsTo: [String]
    /// Tags by class, in the order they were encoded.
    public var tags: [TagClass: [String]]
    /// The encoded identifier, `dyn.a…`.
    public let identifier: String
    /// The decoded payload, e.g. `?0=6:1=pdb`.
    public let payload: String

    /// The identifier macOS gives a tag that no declared type claims.
    public init(tagClass: TagClass, tag: String, conformingTo parent: String = "public.data") {
        self.conformsTo = [parent]
        self.tags = [tagClass: [tag]]
        let payload = "?0=\(Self.abbreviate(parent)):\(Self.abbreviate(tagClass.rawValue))=\(Self.escape(tag))"
        self.payload = payload
        self.identifier = "dyn.a" + Self.base32Encode(Array(payload.utf8))
    }

    /// Decodes `dyn.a…`; nil when the text is not a dynamic identifier this encoding produces.
    public init?(decoding identifier: String) {
        let lowered = identifier.lowercased()
        guard lowered.hasPrefix("dyn.a"), lowered.count > 5,
              let bytes = Self.base32Decode(lowered.dropFirst(5)),
              let payload = String(validating: bytes, as: UTF8.self),
              payload.hasPrefix("?")
        else { return nil }
        var conformsTo: [String] = []
        var tags: [TagClass: [String]] = [:]
        for pair in Self.splitUnescaped(payload.dropFirst(), separator: ":") {
            let parts = Self.splitUnescaped(pair, separator: "=")
            guard parts.count == 2 else { return nil }
            let key = Self.expand(Self.unescape(parts[0]))
            let values = Self.splitUnescaped(parts[1], separator: ",").map { Self.unescape($0) }
            if key == "UTTypeConformsTo" {
                conformsTo += values.map(Self.expand)
            } else if let tagClass = TagClass(rawValue: key) {
                tags[tagClass, default: []] += values
            } else {
                return nil
            }
        }
        self.conformsTo = conformsTo.isEmpty ? ["public.data"] : conformsTo
        self.tags = tags
        self.identifier = identifier
        self.payload = payload
    }

    /// Whether the text has the `dyn.` prefix at all.
    public static func isDynamic(_ identifier: String) -> Bool {
        identifier.utf8.count > 4 && identifier.lowercased().hasPrefix("dyn.")
    }

    // One-character codes Apple uses for the common keys and parents, in its order.
    static let abbreviations: [String] = [
        "UTTypeConformsTo", "public.filename-extension", "com.apple.ostype", "public.mime-type",
        "com.apple.nspboard-type", "public.url-scheme", "public.data", "public.text", "public.plain-text",
        "public.utf16-plain-text", "com.apple.traditional-mac-plain-text", "public.image", "public.video",
        "public.audio", "public.directory", "public.folder",
    ]
    static let codes = Array("0123456789ABCDEF")

    static func abbreviate(_ value: String) -> String {
        if let index = abbreviations.firstIndex(of: value) { return String(codes[index]) }
        return escape(value)
    }

    static func expand(_ value: String) -> String {
        if value.count == 1, let index = codes.firstIndex(of: Character(value)) { return abbreviations[index] }
        return value
    }

    static func escape(_ value: String) -> String {
        var result = ""
        for character in value {
            if character == "\\" || character == ":" || character == "=" || character == "," { result.append("\\") }
            result.append(character)
        }
        return result
    }

    static func unescape(_ value: Substring) -> String {
        var result = ""
        var escaping = false
        for character in value {
            if !escaping && character == "\\" { escaping = true; continue }
            escaping = false
            result.append(character)
        }
        return result
    }

    static func splitUnescaped(_ text: Substring, separator: Character) -> [Substring] {
        var parts: [Substring] = []
        var start = text.startIndex
        var escaping = false
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if escaping {
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else if character == separator {
                parts.append(text[start..<index])
                start = text.index(after: index)
            }
            index = text.index(after: index)
        }
        parts.append(text[start...])
        return parts
    }

    static let alphabet = Array("abcdefghkmnpqrstuvwxyz0123456789".utf8)
    static let alphabetIndex: [UInt8: UInt8] = {
        var map: [UInt8: UInt8] = [:]
        for (index, byte) in alphabet.enumerated() { map[byte] = UInt8(index) }
        return map
    }()

    static func base32Encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count * 8 + 4) / 5)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                output.append(alphabet[Int((buffer >> UInt32(bits)) & 31)])
            }
        }
        if bits > 0 { output.append(alphabet[Int((buffer << UInt32(5 - bits)) & 31)]) }
        return String(decoding: output, as: UTF8.self)
    }

    static func base32Decode(_ text: Substring) -> [UInt8]? {
        var output: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for byte in text.utf8 {
            guard let value = alphabetIndex[byte] else { return nil }
            buffer = (buffer << 5) | UInt32(value)
            bits += 5
            if bits >= 8 {
                bits -= 8
                output.append(UInt8((buffer >> UInt32(bits)) & 0xFF))
            }
        }
        return output
    }
}
