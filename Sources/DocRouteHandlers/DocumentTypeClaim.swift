/// One entry of `CFBundleDocumentTypes`.
public struct DocumentTypeClaim: Sendable, Hashable, Codable {
    /// `CFBundleTypeName`.
    public var name: String?
    public var role: HandlerRole
    public var rank: HandlerRank
    /// `LSItemContentTypes`, or the types the legacy extension and MIME keys map to.
    public var contentTypes: [String]
    /// `CFBundleTypeIconFiles`.
    public var iconFiles: [String]
    /// `LSTypeIsPackage`: documents of this type are folders delivered whole.
    public var isPackage: Bool
    /// `CFBundleTypeExtensions`, read only when `LSItemContentTypes` is absent.
    public var legacyExtensions: [String]
    /// `CFBundleTypeMIMETypes`, read only when `LSItemContentTypes` is absent.
    public var legacyMIMETypes: [String]

    public init(
        name: String? = nil, role: HandlerRole = .viewer, rank: HandlerRank = .default,
        contentTypes: [String] = [], iconFiles: [String] = [], isPackage: Bool = false,
        legacyExtensions: [String] = [], legacyMIMETypes: [String] = []
    ) {
        self.name = name
        self.role = role
        self.rank = rank
        self.contentTypes = contentTypes
        self.iconFiles = iconFiles
        self.isPackage = isPackage
        self.legacyExtensions = legacyExtensions
        self.legacyMIMETypes = legacyMIMETypes
    }
}
