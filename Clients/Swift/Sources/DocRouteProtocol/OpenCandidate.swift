/// One entry of a `candidates` reply: a handler that could open the document, as Mail's
/// "Open In…" list shows it.
public struct OpenCandidate: Sendable, Hashable {
    /// The handler's bundle identifier, which `open` takes as `bundleIdentifier`.
    public var bundleIdentifier: String
    /// The handler's display name (`CFBundleDisplayName`/`CFBundleName`, else its bundle identifier).
    public var name: String
    /// The claimed type the document conforms to, or the URL scheme, that made it a candidate.
    public var matchedType: String
    /// `LSHandlerRank`: `Owner`, `Default` or `Alternate`.
    public var rank: String
    /// `CFBundleTypeRole`: `Editor`, `Viewer` or `Shell`.
    public var role: String
    /// The handler `open` without `bundleIdentifier` would pick.
    public var isDefault: Bool

    /// Creates a candidate.
    public init(bundleIdentifier: String, name: String, matchedType: String, rank: String, role: String, isDefault: Bool) {
        self.bundleIdentifier = bundleIdentifier
        self.name = name
        self.matchedType = matchedType
        self.rank = rank
        self.role = role
        self.isDefault = isDefault
    }
}
