/// A failure of a client operation: the daemon answered with an `error`, or the connection
/// could not be made or broke.
public struct DocRouteClientError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is; stable, for programs to switch on.
    public enum Code: Sendable, Hashable, CustomStringConvertible {
        /// The daemon replied with an `error` message carrying this code.
        case daemon(ErrorCode)
        /// The socket could not be connected (daemon not running, wrong path, no permission).
        case connectFailed
        /// The connection ended, or was closed, before the operation finished.
        case connectionClosed
        /// The daemon sent a reply of the wrong type for the request.
        case unexpectedReply
        /// The daemon sent a line this library could not read.
        case unreadableMessage
        /// A file to pass to the daemon could not be opened here (missing, or not readable by you).
        case fileNotOpened

        /// The wire code for daemon errors, a short name otherwise.
        public var description: String {
            switch self {
            case .daemon(let code): code.rawValue
            case .connectFailed: "connect-failed"
            case .connectionClosed: "connection-closed"
            case .unexpectedReply: "unexpected-reply"
            case .unreadableMessage: "unreadable-message"
            case .fileNotOpened: "file-not-opened"
            }
        }
    }

    /// The kind of failure.
    public var code: Code
    /// What went wrong and, where it helps, what to do.
    public var message: String
    /// The `id` of the request that failed, if any.
    public var requestID: String?
    /// The lower-level error, if any.
    public var cause: (any Error)?
    /// Where in the source the error was created.
    public var file: String
    /// Where in the source the error was created.
    public var line: Int

    /// Creates an error.
    public init(
        code: Code,
        message: String,
        requestID: String? = nil,
        cause: (any Error)? = nil,
        file: String = #fileID,
        line: Int = #line
    ) {
        self.code = code
        self.message = message
        self.requestID = requestID
        self.cause = cause
        self.file = file
        self.line = line
    }

    /// The daemon's error code, when the daemon sent the error.
    public var daemonCode: ErrorCode? {
        if case .daemon(let code) = code { code } else { nil }
    }

    /// `code: message`.
    public var description: String {
        var text = "\(code): \(message)"
        if let cause { text += " [cause: \(cause)]" }
        return text
    }
}

