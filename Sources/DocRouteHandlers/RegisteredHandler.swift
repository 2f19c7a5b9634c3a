import DocRouteTypes

/// A loaded handler with its claims resolved to type identifiers of the registry's catalog.
public struct RegisteredHandler: Sendable, Hashable {
    /// One claimed type, after legacy keys were mapped to types.
    public struct Claim: Sendable, Hashable {
        public var contentType: String
        public var rank: HandlerRank
        public var role: HandlerRole
        public var isPackage: Bool
    }

    public var manifest: HandlerManifest
    /// Every type claimed, in manifest order.
    public var claims: [Claim]

    public var bundleIdentifier: String { manifest.bundleIdentifier }
}
