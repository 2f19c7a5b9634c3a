import DocRouteErrors
import DocRoutePlatform
import SystemPackage

/// An error from the libsystemd binding.
///
/// Like swift-system's and swift-nio's errors it carries a stable ``code`` to match on, a ``message``
/// that tells an operator what to do, the `errno` that libsystemd reported as its `cause` (an
/// `Errno`) when there was one, and the source location that raised it.
package typealias SystemdError = DocRouteError<SystemdErrorCode>

/// A stable identifier of what went wrong in the libsystemd binding; match on this, never on the message.
package struct SystemdErrorCode: ErrorCodeProtocol {
    /// The identifier as text, e.g. `"notify-failed"`.
    package let rawValue: String
    private init(_ rawValue: String) { self.rawValue = rawValue }

    /// `sd_notify` could not deliver a state change to the service manager.
    package static let notifyFailed = Self("notify-failed")
    /// `sd_listen_fds_with_names` rejected the `LISTEN_*` variables the process was started with.
    package static let socketActivationFailed = Self("socket-activation-failed")
    /// A passed descriptor is not a listening `AF_UNIX` stream socket.
    package static let notAUnixStreamListener = Self("not-a-unix-stream-listener")
    /// Checking what kind of socket a passed descriptor is failed.
    package static let socketInspectionFailed = Self("socket-inspection-failed")

    /// `[code] message (errno text) (caused by …) at file:line`.
    package static func describe(_ error: SystemdError) -> String {
        var text = "[\(error.code)] \(error.message)"
        if let errno = error.cause as? Errno {
            text += " (\(describe(errno: errno.rawValue)))"
        } else if let cause = error.cause {
            text += " (caused by: \(cause))"
        }
        return text + " at \(error.location)"
    }

    /// `strerror` text plus the number, e.g. `No such file or directory (errno 2)`.
    static func describe(errno: CInt) -> String {
        "\(Errno(rawValue: errno).systemMessage) (errno \(errno))"
    }
}

extension DocRouteError where Code == SystemdErrorCode {
    /// The positive `errno` value libsystemd returned (it reports `-errno`), if any.
    package var errno: CInt? { (cause as? Errno)?.rawValue }
}
