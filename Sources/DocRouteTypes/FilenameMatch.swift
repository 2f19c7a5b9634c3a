/// What a file's name alone says about its type.
public struct FilenameMatch: Sendable, Hashable {
    /// The declared type the last extension (or a two-part one such as `tar.gz`) names, or nil.
    public var contentType: String?
    /// For a compressed file (`1abc.pdb.gz`, `x.tar.xz`, `x.tgz`), the declared type inside it.
    public var innerContentType: String?
    /// The extension chain as written, with its leading dot (`.pdb.gz`, `.tar.gz`, `.pdf`, `.xyz`),
    /// or empty. The sandbox name rule puts a counter before it.
    public var extensionChain: String
    /// The last extension, lower-cased, when no declared type claims it (it gets a `dyn.` type).
    public var unknownExtension: String?

    public init(contentType: String? = nil, innerContentType: String? = nil, extensionChain: String = "", unknownExtension: String? = nil) {
        self.contentType = contentType
        self.innerContentType = innerContentType
        self.extensionChain = extensionChain
        self.unknownExtension = unknownExtension
    }
}
