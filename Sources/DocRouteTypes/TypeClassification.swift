/// What the type engine concluded about one file.
public struct TypeClassification: Sendable, Hashable {
    /// How the type was decided.
    public enum Decision: String, Sendable, Hashable, Codable {
        /// A declared type claims the file's extension (or, for a name the catalog does not know,
        /// a shared-mime-info glob names a MIME type).
        case `extension`
        /// The first bytes (magic rules, or the text-or-binary test).
        case content
        /// The MIME type given with the file (a mail part's `Content-Type`).
        case mime
        /// Nothing knew the tag: a `dyn.` identifier for it, as macOS makes.
        case dynamic
    }

    /// The Uniform Type Identifier.
    public var contentType: String
    /// Every type it conforms to, nearest first.
    public var conformsTo: [String]
    /// The preferred MIME type, or nil when none is known.
    public var mimeType: String?
    /// For a compressed file, the type inside (`1abc.pdb.gz` holds a `.pdb`).
    public var innerContentType: String?
    public var decidedBy: Decision
    /// The extension chain the name rule keeps together (`.pdb.gz`), or empty.
    public var extensionChain: String

    public init(contentType: String, conformsTo: [String], mimeType: String?, innerContentType: String?, decidedBy: Decision, extensionChain: String) {
        self.contentType = contentType
        self.conformsTo = conformsTo
        self.mimeType = mimeType
        self.innerContentType = innerContentType
        self.decidedBy = decidedBy
        self.extensionChain = extensionChain
    }
}
