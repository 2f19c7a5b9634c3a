/// An error raised while reading or parsing a shared-mime-info database.
///
/// `code` is stable and meant for programs; `message` is for people and says what to do.
public struct MIMEDatabaseError: Error, CustomStringConvertible {
    /// A stable identifier for the kind of failure.
    public struct Code: Hashable, Sendable, RawRepresentable, CustomStringConvertible {
        /// The identifier's text, e.g. `mime.magic.malformed`.
        public var rawValue: String

        /// Wraps a raw identifier.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// The identifier's text.
        public var description: String { rawValue }

        /// A database file exists but could not be opened or read.
        public static let unreadableFile = Code(rawValue: "mime.file.unreadable")
        /// A database file is larger than any real database file could be.
        public static let fileTooLarge = Code(rawValue: "mime.file.too-large")
        /// The `magic` file does not start with `MIME-Magic\0\n`.
        public static let magicHeaderMissing = Code(rawValue: "mime.magic.header-missing")
        /// The `magic` file's structure is broken (truncated value, bad number, rule outside a section).
        public static let malformedMagic = Code(rawValue: "mime.magic.malformed")
        /// A text file (`globs2`, `subclasses`, `aliases`) is not valid UTF-8.
        public static let malformedText = Code(rawValue: "mime.text.malformed")
    }

    /// A failed system call, kept as the `cause` of an I/O error.
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

    /// What kind of failure this is.
    public var code: Code
    /// What went wrong and what to do about it.
    public var message: String
    /// The file involved, when there is one.
    public var path: String?
    /// The lower-level error that caused this one, if any.
    public var cause: (any Error)?
    /// Where in docroute's source the error was raised.
    public var fileID: String
    /// The line in `fileID`.
    public var line: Int

    /// Creates an error; the source location defaults to the caller's.
    public init(
        code: Code,
        message: String,
        path: String? = nil,
        cause: (any Error)? = nil,
        fileID: String = #fileID,
        line: Int = #line
    ) {
        self.code = code
        self.message = message
        self.path = path
        self.cause = cause
        self.fileID = fileID
        self.line = line
    }

    /// `code: message (path) [cause]`.
    public var description: String {
        var text = "\(code): \(message)"
        if let path { text += " (\(path))" }
        if let cause { text += " [\(cause)]" }
        return text
    }
}
