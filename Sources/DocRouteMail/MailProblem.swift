/// Something wrong with a message's structure, found while parsing it. Parsing never stops for
/// these: what can be read is read, and each problem is listed in the ``MailSummary``.
public struct MailProblem: Sendable, Hashable, CustomStringConvertible {
    /// Stable codes: tools, tests and logs match on these, never on ``message``.
    public enum Code: String, Sendable, Hashable {
        /// The input was empty.
        case emptyInput = "empty-input"
        /// The input does not start with a header field: not a mail.
        case noHeader = "no-header"
        /// A header section was larger than ``MailParser/Limits/maximumHeaderBytes``. For the
        /// message's own header the message cannot be read at all; for a part, the part is skipped.
        case headerTooLarge = "header-too-large"
        /// Parts nested deeper than ``MailParser/Limits/maximumDepth`` were skipped, unread.
        case tooDeep = "too-deep"
        /// More parts than ``MailParser/Limits/maximumParts``; the rest were skipped.
        case tooManyParts = "too-many-parts"
        /// A multipart's closing boundary never came (the input ended, or an outer boundary came first).
        case unterminatedMultipart = "unterminated-multipart"
        /// A multipart without a usable `boundary` parameter; its body was skipped.
        case missingBoundary = "missing-boundary"
        /// An attachment's base64 was cut short.
        case truncatedEncoding = "truncated-encoding"
        /// An attachment's base64 lacked its final `=` padding; every byte was decoded all the same.
        case badPadding = "bad-padding"
    }

    /// What went wrong.
    public var code: Code
    /// The part concerned (`2.1`), empty for the message itself.
    public var partPath: String
    /// What happened, for people.
    public var message: String

    /// Creates a problem.
    public init(code: Code, partPath: String, message: String) {
        self.code = code
        self.partPath = partPath
        self.message = message
    }

    /// Whether the message as a whole cannot be read (rather than one part of it).
    public var isFatal: Bool {
        switch code {
        case .emptyInput, .noHeader: true
        case .headerTooLarge: partPath.isEmpty
        default: false
        }
    }

    /// `code at part: message`.
    public var description: String {
        "\(code.rawValue)\(partPath.isEmpty ? "" : " at part \(partPath)"): \(message)"
    }
}
