import DocRouteErrors

/// A failure of a client operation: the daemon answered with an `error`, or the connection
/// could not be made or broke.
public typealias DocRouteClientError = DocRouteError<DocRouteClientErrorCode>

/// What kind of client failure this is; stable, for programs to switch on (`case .connectFailed:`,
/// `case .daemon(.notFound):`). A struct, so adding a kind breaks no `switch`.
public struct DocRouteClientErrorCode: ErrorCodeProtocol {
    private enum Kind: Hashable, Sendable {
        case daemon(ErrorCode)
        case connectFailed
        case connectionClosed
        case unexpectedReply
        case unreadableMessage
        case fileNotOpened
    }

    private let kind: Kind

    /// The daemon replied with an `error` message carrying this code (one a newer daemon sends too).
    public static func daemon(_ code: ErrorCode) -> Self { Self(kind: .daemon(code)) }
    /// The socket could not be connected (daemon not running, wrong path, no permission).
    public static let connectFailed = Self(kind: .connectFailed)
    /// The connection ended, or was closed, before the operation finished.
    public static let connectionClosed = Self(kind: .connectionClosed)
    /// The daemon sent a reply of the wrong type for the request.
    public static let unexpectedReply = Self(kind: .unexpectedReply)
    /// The daemon sent a line this library could not read.
    public static let unreadableMessage = Self(kind: .unreadableMessage)
    /// A file to pass to the daemon could not be opened here (missing, or not readable by you).
    public static let fileNotOpened = Self(kind: .fileNotOpened)

    /// The daemon's error code, when the daemon sent the error.
    public var daemonCode: ErrorCode? {
        if case .daemon(let code) = kind { code } else { nil }
    }

    /// The wire code for daemon errors, a short name otherwise.
    public var rawValue: String {
        switch kind {
        case .daemon(let code): code.rawValue
        case .connectFailed: "connect-failed"
        case .connectionClosed: "connection-closed"
        case .unexpectedReply: "unexpected-reply"
        case .unreadableMessage: "unreadable-message"
        case .fileNotOpened: "file-not-opened"
        }
    }

    /// `code: message`, then what to do for a daemon code that has advice (``ErrorCode/advice``),
    /// then the cause.
    public static func describe(_ error: DocRouteClientError) -> String {
        var text = "\(error.code): \(error.message)"
        if let advice = error.code.daemonCode?.advice { text += " " + advice }
        if let cause = error.cause { text += " [cause: \(cause)]" }
        return text
    }
}

extension DocRouteError where Code == DocRouteClientErrorCode {
    /// The daemon's error code, when the daemon sent the error.
    public var daemonCode: ErrorCode? { code.daemonCode }
}
