/// The parameters of a structured MIME header value, with RFC 2231 continuations and charsets.
///
/// `filename*=UTF-8''%C3%A9t%C3%A9.pdf`, `filename*0*=UTF-8''%C3%A9; filename*1=t.pdf` and the plain
/// `filename="été.pdf"` (raw UTF-8, or RFC 2047 words inside the quotes as some mailers write) all
/// come out as text through ``text(for:)``. An RFC 2231 form wins over a plain one of the same name.
package struct MIMEParameters: Sendable, Hashable {
    /// One parameter as written.
    package struct Raw: Sendable, Hashable {
        /// The name, lowercased, with any RFC 2231 suffix (`filename*0*`).
        package var name: String
        /// The value's bytes, unquoted and unescaped, not decoded.
        package var value: [UInt8]
        /// Whether the value was a quoted string.
        package var wasQuoted: Bool
    }

    /// The parameters in the order written.
    package var raw: [Raw]

    /// At most this many continuation segments of one parameter are joined.
    static let maximumSegments = 1000

    /// Parameters from their raw form.
    package init(raw: [Raw]) {
        self.raw = raw
    }

    /// The decoded text of parameter `name` (lowercase), or nil when it is absent.
    package func text(for name: String) -> String? {
        if let extended = rfc2231Text(for: name) { return extended }
        guard let plain = raw.first(where: { $0.name == name }) else { return nil }
        if plain.value.contains(0x3D), plain.value.contains(0x3F) {
            return EncodedWords.decode(plain.value)
        }
        return MailCharset.decodeUnlabelled(plain.value)
    }

    /// The RFC 2231 value of `name` (`name*`, or `name*0`/`name*0*`, `name*1`…), or nil if it has none.
    func rfc2231Text(for name: String) -> String? {
        var segments: [(index: Int, extended: Bool, value: [UInt8])] = []
        let prefix = name + "*"
        for parameter in raw where parameter.name.hasPrefix(prefix) {
            let suffix = parameter.name.dropFirst(prefix.count)
            if suffix.isEmpty {
                // `name*=charset'lang'value`: a single extended segment.
                segments.append((0, true, parameter.value))
            } else {
                let extended = suffix.hasSuffix("*")
                let digits = extended ? suffix.dropLast() : suffix
                guard let index = Int(digits), index >= 0, index < Self.maximumSegments else { continue }
                segments.append((index, extended, parameter.value))
            }
        }
        guard !segments.isEmpty else { return nil }
        // Sorted by index, the first of any duplicate kept; gaps are tolerated.
        segments.sort { $0.index < $1.index }
        var seen: Set<Int> = []
        segments = segments.filter { seen.insert($0.index).inserted }

        var charset: String?
        var bytes: [UInt8] = []
        for (position, segment) in segments.enumerated() {
            guard segment.extended else {
                bytes += segment.value
                continue
            }
            var value = segment.value[...]
            if position == 0 {
                // charset'language'value; a value without the two quotes is taken as percent-encoded only.
                let quotes = value.indices.filter { value[$0] == 0x27 }.prefix(2)
                if quotes.count == 2 {
                    let label = String(decoding: value[..<quotes[quotes.startIndex]], as: UTF8.self)
                    charset = label.isEmpty ? nil : label
                    value = value[(quotes[quotes.startIndex + 1] + 1)...]
                }
            }
            bytes += Self.percentDecoded(value)
        }
        if let charset { return MailCharset.decodeLeniently(bytes, label: charset) }
        return MailCharset.decodeUnlabelled(bytes)
    }

    /// `%XX` to bytes; a `%` without two hex digits stays as written.
    static func percentDecoded(_ value: ArraySlice<UInt8>) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(value.count)
        var index = value.startIndex
        while index < value.endIndex {
            if value[index] == 0x25, index + 2 < value.endIndex,
               let high = hexValue(value[index + 1]), let low = hexValue(value[index + 2]) {
                result.append(high << 4 | low)
                index += 3
            } else {
                result.append(value[index])
                index += 1
            }
        }
        return result
    }
}
