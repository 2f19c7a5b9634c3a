/// What the type engine concluded about one file.
public struct TypeClassification: Sendable, Hashable {
    /// How the type was decided.
    public enum Decision: String, Sendable, Hashable, Codable {
        /// The name: one MIME type of the database's globs (handlers' exported types included), or
        /// an extension that only a declared type claims.
        case `extension`
        /// The first bytes (magic rules, alone or choosing among the name's candidates, or the
        /// text-or-binary test); for a folder, that it is one.
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
    /// The MIME type detection found (canonical, lower case), or the hint it was given; nil only
    /// when typed by name alone (``TypeEngine/classify(filename:)``) and the type declares none.
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
