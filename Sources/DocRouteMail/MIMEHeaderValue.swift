/// A structured MIME header value: `Content-Type: text/plain; charset=utf-8` or
/// `Content-Disposition: attachment; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf`.
///
/// Parsing is lenient the way mail readers are: comments are skipped, a quoted string missing its
/// closing quote runs to the end, an unquoted value runs to the next `;` (spaces included), a
/// parameter without `=` is ignored.
package struct MIMEHeaderValue: Sendable, Hashable {
    /// The value before the parameters, lowercased and without whitespace or comments
    /// (`text/plain`, `attachment`); empty when there is none.
    package var value: String
    /// The parameters as written, in order.
    package var parameters: MIMEParameters

    /// Parses the unfolded bytes of a header field's value.
    package init(parsing bytes: some Collection<UInt8>) {
        let text = Array(bytes)
        var index = 0
        var main: [UInt8] = []
        var quoted = false
        // The main value: everything up to the first `;` outside quotes and comments.
        while index < text.count {
            let byte = text[index]
            if byte == 0x22 {
                quoted.toggle()
            } else if !quoted, byte == 0x3B {
                break
            } else if !quoted, byte == 0x28 {
                index = Self.skipComment(text, from: index)
                continue
            } else if byte != 0x20 && byte != 0x09 && byte != 0x0D && byte != 0x0A {
                main.append(Self.lowercase(byte))
            }
            index += 1
        }
        value = String(decoding: main, as: UTF8.self)
        var raw: [MIMEParameters.Raw] = []
        while index < text.count, text[index] == 0x3B {
            index += 1
            if let (parameter, next) = Self.parseParameter(text, from: index) {
                raw.append(parameter)
                index = next
            } else {
                while index < text.count, text[index] != 0x3B { index += 1 }
            }
        }
        parameters = MIMEParameters(raw: raw)
    }

    /// `type/subtype` of a Content-Type value, or nil when the value is not of that shape.
    package var mediaType: (type: Substring, subtype: Substring)? {
        guard let slash = value.firstIndex(of: "/") else { return nil }
        let type = value[..<slash]
        let subtype = value[value.index(after: slash)...]
        guard !type.isEmpty, !subtype.isEmpty, !subtype.contains("/") else { return nil }
        return (type, subtype)
    }

    /// One `name=value` from `start` (just after a `;`) and the index of the `;` or end after it.
    static func parseParameter(_ text: [UInt8], from start: Int) -> (MIMEParameters.Raw, Int)? {
        var index = skipSpaceAndComments(text, from: start)
        var name: [UInt8] = []
        while index < text.count, text[index] != 0x3D, text[index] != 0x3B {
            if text[index] == 0x28 {
                index = skipComment(text, from: index)
                continue
            }
            if text[index] != 0x20, text[index] != 0x09 { name.append(lowercase(text[index])) }
            index += 1
        }
        guard index < text.count, text[index] == 0x3D, !name.isEmpty else { return nil }
        index = skipSpaceAndComments(text, from: index + 1)
        var value: [UInt8] = []
        var wasQuoted = false
        if index < text.count, text[index] == 0x22 {
            wasQuoted = true
            index += 1
            while index < text.count, text[index] != 0x22 {
                if text[index] == 0x5C, index + 1 < text.count { index += 1 }
                value.append(text[index])
                index += 1
            }
            index += 1
            while index < text.count, text[index] != 0x3B { index += 1 }
        } else {
            while index < text.count, text[index] != 0x3B {
                value.append(text[index])
                index += 1
            }
            while let last = value.last, last == 0x20 || last == 0x09 || last == 0x0D || last == 0x0A { value.removeLast() }
        }
        return (MIMEParameters.Raw(name: String(decoding: name, as: UTF8.self), value: value, wasQuoted: wasQuoted), min(index, text.count))
    }

    static func skipSpaceAndComments(_ text: [UInt8], from start: Int) -> Int {
        var index = start
        while index < text.count {
            switch text[index] {
            case 0x20, 0x09, 0x0D, 0x0A: index += 1
            case 0x28: index = skipComment(text, from: index)
            default: return index
            }
        }
        return index
    }

    /// The index after the comment starting at `start` (`(`); comments nest and `\` escapes.
    static func skipComment(_ text: [UInt8], from start: Int) -> Int {
        var depth = 0
        var index = start
        while index < text.count {
            switch text[index] {
            case 0x5C: index += 1
            case 0x28: depth += 1
            case 0x29:
                depth -= 1
                if depth == 0 { return index + 1 }
            default: break
            }
            index += 1
        }
        return index
    }

    static func lowercase(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte
    }
}
