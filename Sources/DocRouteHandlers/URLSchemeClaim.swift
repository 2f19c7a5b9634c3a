/// One entry of `CFBundleURLTypes`.
public struct URLSchemeClaim: Sendable, Hashable, Codable {
    /// `CFBundleURLName`.
    public var name: String?
    /// `CFBundleURLSchemes`, lower-cased (schemes are case-insensitive).
    public var schemes: [String]

    public init(name: String? = nil, schemes: [String]) {
        self.name = name
        self.schemes = schemes
    }

    /// RFC 3986: `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`.
    public static func isValidScheme(_ scheme: String) -> Bool {
        guard let first = scheme.utf8.first, Self.isAlpha(first) else { return false }
        return scheme.utf8.allSatisfy { isAlpha($0) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2B || $0 == 0x2D || $0 == 0x2E }
    }

    static func isAlpha(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
    }
}
