import DocRouteErrors
import SystemPackage

/// Why the socket server could not listen; `message` says what to do, and the `errno` of a failed
/// system call is the `cause`.
package typealias SocketServerError = DocRouteError<SocketServerErrorCode>

/// Stable codes of ``SocketServerError``.
package struct SocketServerErrorCode: ErrorCodeProtocol {
    /// The code's text, e.g. `socket-in-use`.
    package let rawValue: String
    private init(_ rawValue: String) { self.rawValue = rawValue }

    /// No socket could be created.
    package static let socketFailed = Self("socket-failed")
    /// The path does not fit in `sun_path`.
    package static let pathTooLong = Self("socket-path-too-long")
    /// The socket could not be bound to its path.
    package static let bindFailed = Self("socket-bind-failed")
    /// Something other than a socket is at the path.
    package static let notASocket = Self("socket-path-not-a-socket")
    /// Another daemon answers on the socket.
    package static let inUse = Self("socket-in-use")

    /// The message alone: it names the socket and what to do.
    package static func describe(_ error: SocketServerError) -> String { error.message }
}

extension DocRouteError where Code == SocketServerErrorCode {
    /// The `errno` of the failed system call, when one failed.
    package var errno: Int32? { (cause as? Errno)?.rawValue }
}
