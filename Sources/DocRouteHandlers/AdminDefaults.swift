/// An administrator's choice of handler for a type or a URL scheme (`docroutectl default set`).
public struct AdminDefaults: Sendable, Hashable, Codable {
    /// Lower-cased type identifier to bundle identifier.
    public var types: [String: String]
    /// Lower-cased URL scheme to bundle identifier.
    public var schemes: [String: String]

    public init(types: [String: String] = [:], schemes: [String: String] = [:]) {
        self.types = types
        self.schemes = schemes
    }

    /// The default for a type, if any.
    public func handler(forType contentType: String) -> String? {
        types.isEmpty ? nil : types[contentType.lowercased()]
    }

    /// The default for a scheme, if any.
    public func handler(forScheme scheme: String) -> String? {
        schemes.isEmpty ? nil : schemes[scheme.lowercased()]
    }
}
