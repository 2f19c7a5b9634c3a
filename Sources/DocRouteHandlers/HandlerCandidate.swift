/// A handler considered for a document or URL, with what decided its place.
public struct HandlerCandidate: Sendable, Hashable, Codable {
    public var bundleIdentifier: String
    /// The claimed type (or URL scheme) that made it a candidate.
    public var matchedType: String
    public var rank: HandlerRank
    public var role: HandlerRole
    /// The administrator chose it for this type or scheme.
    public var isAdminDefault: Bool
    /// For a compound file, whether it also claims the inner type (or a parent of it).
    public var claimsInnerType: Bool
}
