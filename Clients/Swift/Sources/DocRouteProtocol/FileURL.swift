/// Conversion between absolute file paths and `file://` URLs (RFC 3986, RFC 8089).
///
/// Paths are bytes: Linux file names need not be UTF-8, and such names must still get a URL
/// and come back from it unchanged. Every byte except `/` and the unreserved characters
/// (`A-Z a-z 0-9 - . _ ~`) is percent-encoded with upper-case hex digits.
public enum FileURL {
    /// The `file://` URL of an absolute path given as text.
    public static func string(forAbsolutePath path: String) throws(ProtocolError) -> String {
        try string(forAbsolutePath: Array(path.utf8))
    }

    /// The `file://` URL of an absolute path given as raw bytes (which need not be UTF-8).
    ///
    /// Throws `bad-request` when the path is not absolute or contains a NUL byte.
    public static func string(forAbsolutePath path: [UInt8]) throws(ProtocolError) -> String {
        guard path.first == UInt8(ascii: "/") else {
            throw .badRequest("path '\(String(decoding: path, as: UTF8.self))' is not absolute; a file URL needs a path starting with '/'")
        }
        guard !path.contains(0) else {
            throw .badRequest("a file path cannot contain a NUL byte")
        }
        var url: [UInt8] = Array("file://".utf8)
        url.reserveCapacity(url.count + path.count * 3)
        for byte in path {
            if byte == UInt8(ascii: "/") || isUnreserved(byte) {
                url.append(byte)
            } else {
                url.append(UInt8(ascii: "%"))
                url.append(hexDigits[Int(byte >> 4)])
                url.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        // Only ASCII was appended, so this is valid UTF-8.
        return String(decoding: url, as: UTF8.self)
    }

    /// Whether the URL's scheme is `file` (case-insensitive, as RFC 3986 says schemes are).
    public static func isFileURL(_ urlString: String) -> Bool {
        urlString.utf8.count >= 5 && urlString.utf8.prefix(5).map(lowercasedASCII).elementsEqual("file:".utf8)
    }

    /// The absolute path, as bytes, that a `file:` URL names.
    ///
    /// Accepts `file:///path`, `file://localhost/path` and `file:/path`. Throws `bad-request`
    /// for another scheme, a remote host, a query or fragment (`?` and `#` in a file name must be
    /// percent-encoded), a malformed `%` escape, or an encoded NUL byte.
    public static func path(fromURLString urlString: String) throws(ProtocolError) -> [UInt8] {
        guard isFileURL(urlString) else {
            throw .badRequest("'\(urlString)' is not a file URL; expected 'file:///absolute/path'")
        }
        var rest = Array(urlString.utf8.dropFirst(5))
        if rest.starts(with: "//".utf8) {
            rest.removeFirst(2)
            let hostEnd = rest.firstIndex(of: UInt8(ascii: "/")) ?? rest.endIndex
            let host = rest[..<hostEnd].map(lowercasedASCII)
            guard host.isEmpty || host.elementsEqual("localhost".utf8) else {
                throw .badRequest(
                    "file URL '\(urlString)' names host '\(String(decoding: rest[..<hostEnd], as: UTF8.self))'; only local files can be named ('file:///path')")
            }
            rest.removeSubrange(..<hostEnd)
        }
        guard rest.first == UInt8(ascii: "/") else {
            throw .badRequest("file URL '\(urlString)' has no absolute path")
        }
        var path: [UInt8] = []
        path.reserveCapacity(rest.count)
        var index = rest.startIndex
        while index < rest.endIndex {
            let byte = rest[index]
            switch byte {
            case UInt8(ascii: "?"), UInt8(ascii: "#"):
                throw .badRequest(
                    "file URL '\(urlString)' has a query or fragment; percent-encode '?' as %3F and '#' as %23 in file names")
            case UInt8(ascii: "%"):
                guard index + 2 < rest.endIndex,
                    let high = ASCIIHex.value(rest[index + 1]), let low = ASCIIHex.value(rest[index + 2])
                else {
                    throw .badRequest("file URL '\(urlString)' has a malformed percent escape; '%' must be followed by two hex digits")
                }
                let decoded = high << 4 | low
                guard decoded != 0 else {
                    throw .badRequest("file URL '\(urlString)' encodes a NUL byte, which no file name can contain")
                }
                path.append(decoded)
                index += 3
            default:
                path.append(byte)
                index += 1
            }
        }
        return path
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    private static func lowercasedASCII(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }
}
