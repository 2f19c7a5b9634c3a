/// One Uniform Type Identifier declaration: what Apple writes in `UTExportedTypeDeclarations`,
/// `UTImportedTypeDeclarations`, or its own CoreTypes bundle.
public struct TypeDeclaration: Sendable, Hashable, Codable {
    /// The identifier as declared (`com.sunsetlakesoftware.molecules.pdb`). Compared case-insensitively.
    public var identifier: String
    /// Direct parents (`UTTypeConformsTo`). A type may have several.
    public var conformsTo: [String]
    /// Filename extensions without the leading dot (`public.filename-extension`).
    public var filenameExtensions: [String]
    /// MIME types (`public.mime-type`), the first being the preferred one.
    public var mimeTypes: [String]
    /// Human description (`UTTypeDescription`).
    public var description: String
    /// Where the declaration came from; decides which of two declarations of one identifier wins.
    public var origin: DeclarationOrigin

    public init(
        identifier: String,
        conformsTo: [String] = [],
        filenameExtensions: [String] = [],
        mimeTypes: [String] = [],
        description: String = "",
        origin: DeclarationOrigin = .system
    ) {
        self.identifier = identifier
        self.conformsTo = conformsTo
        self.filenameExtensions = filenameExtensions
        self.mimeTypes = mimeTypes
        self.description = description
        self.origin = origin
    }

    private enum CodingKeys: String, CodingKey {
        case identifier, conformsTo, filenameExtensions, mimeTypes, description
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.identifier = try container.decode(String.self, forKey: .identifier)
        self.conformsTo = try container.decodeIfPresent([String].self, forKey: .conformsTo) ?? []
        self.filenameExtensions = try container.decodeIfPresent([String].self, forKey: .filenameExtensions) ?? []
        self.mimeTypes = try container.decodeIfPresent([String].self, forKey: .mimeTypes) ?? []
        self.description = try container.decodeIfPresent(String.self, forKey: .description) ?? ""
        self.origin = .system
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(identifier, forKey: .identifier)
        try container.encode(conformsTo, forKey: .conformsTo)
        try container.encode(filenameExtensions, forKey: .filenameExtensions)
        try container.encode(mimeTypes, forKey: .mimeTypes)
        try container.encode(description, forKey: .description)
    }
}
