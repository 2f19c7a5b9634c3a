import DocRouteErrors

/// An error raised while reading or parsing a shared-mime-info database; the database file is its
/// `inputFile`.
///
/// `code` is stable and meant for programs; `message` is for people and says what to do.
public typealias MIMEDatabaseError = DocRouteError<MIMEDatabaseErrorCode>

/// A stable identifier for the kind of ``MIMEDatabaseError``.
public struct MIMEDatabaseErrorCode: ErrorCodeProtocol {
    private enum Known: String {
        case unreadableFile = "mime.file.unreadable"
        case fileTooLarge = "mime.file.too-large"
        case magicHeaderMissing = "mime.magic.header-missing"
        case malformedMagic = "mime.magic.malformed"
        case malformedText = "mime.text.malformed"
    }

    private let known: Known
    private init(_ known: Known) { self.known = known }
    /// The identifier's text, e.g. `mime.magic.malformed`.
    public var rawValue: String { known.rawValue }

    /// A database file exists but could not be opened or read.
    public static let unreadableFile = Self(.unreadableFile)
    /// A database file is larger than any real database file could be.
    public static let fileTooLarge = Self(.fileTooLarge)
    /// The `magic` file does not start with `MIME-Magic\0\n`.
    public static let magicHeaderMissing = Self(.magicHeaderMissing)
    /// The `magic` file's structure is broken (truncated value, bad number, rule outside a section).
    public static let malformedMagic = Self(.malformedMagic)
    /// A text file (`globs2`, `subclasses`, `aliases`) is not valid UTF-8.
    public static let malformedText = Self(.malformedText)

    /// `code: message (file) [cause]`.
    public static func describe(_ error: MIMEDatabaseError) -> String {
        var text = "\(error.code): \(error.message)"
        if let path = error.inputFile { text += " (\(path))" }
        if let cause = error.cause { text += " [\(cause)]" }
        return text
    }

    /// A failed system call, kept as the `cause` of an I/O error. (DocRouteTypes depends on
    /// nothing, not even swift-system's `Errno`.)
    public struct SystemCallFailure: Error, CustomStringConvertible {
        /// The name of the call, e.g. `open`.
        public var call: String
        /// The `errno` value the call left.
        public var errno: Int32

        /// Describes a failed call.
        public init(call: String, errno: Int32) {
            self.call = call
            self.errno = errno
        }

        /// `call` and the errno number.
        public var description: String { "\(call) failed with errno \(errno)" }
    }
}
