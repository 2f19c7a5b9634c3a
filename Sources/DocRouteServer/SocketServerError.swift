import DocRouteErrors
import SystemPackage

/// Why the socket server could not listen; `message` says what to do, and the `errno` of a failed
/// system call is the `cause`.
package typealias SocketServerError = DocRouteError<SocketServerErrorCode>

/// Stable codes of ``SocketServerError``.
package struct SocketServerErrorCode: ErrorCodeProtocol {
    private enum Known: String {
        case socketFailed = "socket-failed"
        case pathTooLong = "socket-path-too-long"
        case bindFailed = "socket-bind-failed"
        case notASocket = "socket-path-not-a-socket"
        case inUse = "socket-in-use"
    }

    private let known: Known
    private init(_ known: Known) { self.known = known }
    /// The code's text, e.g. `socket-in-use`.
    package var rawValue: String { known.rawValue }

    /// No socket could be created.
    package static let socketFailed = Self(.socketFailed)
    /// The path does not fit in `sun_path`.
    package static let pathTooLong = Self(.pathTooLong)
    /// The socket could not be bound to its path.
    package static let bindFailed = Self(.bindFailed)
    /// Something other than a socket is at the path.
    package static let notASocket = Self(.notASocket)
    /// Another daemon answers on the socket.
    package static let inUse = Self(.inUse)

    /// The message alone: it names the socket and what to do.
    package static func describe(_ error: SocketServerError) -> String { error.message }
}

extension DocRouteError where Code == SocketServerErrorCode {
    /// The `errno` of the failed system call, when one failed.
    package var errno: Int32? { (cause as? Errno)?.rawValue }
}
