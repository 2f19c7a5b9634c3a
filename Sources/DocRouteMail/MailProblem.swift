import DocRouteErrors

/// Something wrong with a message's structure, found while parsing it. Parsing never stops for
/// these: what can be read is read, and each problem is listed in the ``MailSummary``. The part
/// concerned (`2.1`) is its `inputKey`, none for the message itself.
package typealias MailProblem = DocRouteError<MailProblemCode>

/// Stable codes of ``MailProblem``: tools, tests and logs match on these, never on the message.
package struct MailProblemCode: ErrorCodeProtocol {
    /// The code's text, e.g. `too-deep`.
    package let rawValue: String
    private init(_ rawValue: String) { self.rawValue = rawValue }

    /// The input was empty.
    package static let emptyInput = Self("empty-input")
    /// The input does not start with a header field: not a mail.
    package static let noHeader = Self("no-header")
    /// A header section was larger than ``MailParser/Limits/maximumHeaderBytes``. For the
    /// message's own header the message cannot be read at all; for a part, the part is skipped.
    package static let headerTooLarge = Self("header-too-large")
    /// Parts nested deeper than ``MailParser/Limits/maximumDepth`` were skipped, unread.
    package static let tooDeep = Self("too-deep")
    /// More parts than ``MailParser/Limits/maximumParts``; the rest were skipped.
    package static let tooManyParts = Self("too-many-parts")
    /// A multipart's closing boundary never came (the input ended, or an outer boundary came first).
    package static let unterminatedMultipart = Self("unterminated-multipart")
    /// A multipart without a usable `boundary` parameter; its body was skipped.
    package static let missingBoundary = Self("missing-boundary")
    /// An attachment's base64 was cut short.
    package static let truncatedEncoding = Self("truncated-encoding")
    /// An attachment's base64 lacked its final `=` padding; every byte was decoded all the same.
    package static let badPadding = Self("bad-padding")

    /// `code at part: message`.
    package static func describe(_ problem: MailProblem) -> String {
        "\(problem.code.rawValue)\(problem.partPath.isEmpty ? "" : " at part \(problem.partPath)"): \(problem.message)"
    }
}

extension DocRouteError where Code == MailProblemCode {
    /// Creates a problem of the part `partPath` (`2.1`; empty for the message itself).
    package init(code: Code, partPath: String, message: String, file: String = #fileID, line: Int = #line) {
        self.init(code: code, inputKey: partPath.isEmpty ? nil : partPath, message: message, file: file, line: line)
    }

    /// The part concerned (`2.1`), empty for the message itself.
    package var partPath: String { inputKey ?? "" }

    /// Whether the message as a whole cannot be read (rather than one part of it).
    package var isFatal: Bool {
        switch code {
        case .emptyInput, .noHeader: true
        case .headerTooLarge: partPath.isEmpty
        default: false
        }
    }
}
