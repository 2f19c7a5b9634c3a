/// The outcome of ``MIMEDatabase/detect(filename:head:options:)``: a type and why it was chosen.
public struct MIMEDetection: Sendable, Hashable {
    /// Which step of the spec's checking order settled the type.
    public enum Method: String, Sendable, Hashable, CustomStringConvertible {
        /// The file name: one type matched, or the content could not tell candidates apart (or
        /// agreed with one only as text).
        case glob
        /// A magic rule on the leading bytes (alone, or to choose among glob candidates).
        case magic
        /// Nothing matched and the leading bytes look like text: `text/plain`.
        case textFallback
        /// Nothing matched and the leading bytes look binary: `application/octet-stream`.
        case binaryFallback

        /// The raw value, e.g. `textFallback`.
        public var description: String { rawValue }
    }

    /// The canonical (lowercase, alias-resolved) MIME type.
    public var mimeType: String
    /// Which step decided.
    public var decidedBy: Method
    /// The types of the glob step that matched (a literal name, the longest suffix, or fnmatch
    /// patterns), highest weight first; more than one means the name was ambiguous. Empty when no
    /// glob matched or the name was ignored.
    public var globCandidates: [String]
    /// The magic result, when magic sniffing ran and something matched.
    public var magic: MIMEMagicMatch?

    /// Creates a detection result.
    public init(mimeType: String, decidedBy: Method, globCandidates: [String] = [], magic: MIMEMagicMatch? = nil) {
        self.mimeType = mimeType
        self.decidedBy = decidedBy
        self.globCandidates = globCandidates
        self.magic = magic
    }
}
