import DocRouteErrors

/// An error raised while reading or parsing a shared-mime-info database; the database file is its
/// `inputFile`.
///
/// `code` is stable and meant for programs; `message` is for people and says what to do.
public typealias MIMEDatabaseError = DocRouteError<MIMEDatabaseErrorCode>

/// A stable identifier for the kind of ``MIMEDatabaseError``.
public struct MIMEDatabaseErrorCode: ErrorCodeProtocol {
    /// The identifier's text, e.g. `mime.magic.malformed`.
    public let rawValue: String
    private init(_ rawValue: String) { self.rawValue = rawValue }

    /// A database file exists but could not be opened or read.
    public static let unreadableFile = Self("mime.file.unreadable")
    /// A database file is larger than any real database file could be.
    public static let fileTooLarge = Self("mime.file.too-large")
    /// The `magic` file does not start with `MIME-Magic\0\n`.
    public static let magicHeaderMissing = Self("mime.magic.header-missing")
    /// The `magic` file's structure is broken (truncated value, bad number, rule outside a section).
    public static let malformedMagic = Self("mime.magic.malformed")
    /// A text file (`globs2`, `subclasses`, `aliases`) is not valid UTF-8.
    public static let malformedText = Self("mime.text.malformed")

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
