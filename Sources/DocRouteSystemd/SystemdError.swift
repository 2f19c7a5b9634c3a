#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An error from the libsystemd binding.
///
/// Like swift-system's and swift-nio's errors it carries a stable ``code`` to match on, a ``message``
/// that tells an operator what to do, the `errno` that libsystemd reported when there was one, an
/// optional underlying ``cause`` and the source location that raised it.
public struct SystemdError: Error, Sendable, CustomStringConvertible {
    /// A stable identifier of what went wrong; match on this, never on ``message``.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The identifier as text, e.g. `"notify-failed"`.
        public let rawValue: String

        private init(_ rawValue: String) { self.rawValue = rawValue }

        /// `sd_notify` could not deliver a state change to the service manager.
        public static let notifyFailed = Code("notify-failed")
        /// `sd_listen_fds_with_names` rejected the `LISTEN_*` variables the process was started with.
        public static let socketActivationFailed = Code("socket-activation-failed")
        /// A passed descriptor is not a listening `AF_UNIX` stream socket.
        public static let notAUnixStreamListener = Code("not-a-unix-stream-listener")
        /// Checking what kind of socket a passed descriptor is failed.
        public static let socketInspectionFailed = Code("socket-inspection-failed")

        /// The identifier as text.
        public var description: String { rawValue }
    }

    /// Where an error was raised.
    public struct SourceLocation: Hashable, Sendable, CustomStringConvertible {
        /// The `#fileID` of the raising code.
        public let file: String
        /// The line of the raising code.
        public let line: UInt

        /// A location; normally filled from the call site's `#fileID` and `#line`.
        public init(file: String = #fileID, line: UInt = #line) {
            self.file = file
            self.line = line
        }

        /// `file:line`.
        public var description: String { "\(file):\(line)" }
    }

    /// What went wrong, stable across releases.
    public let code: Code
    /// What happened and what to do about it, for a human.
    public let message: String
    /// The positive `errno` value libsystemd returned (it reports `-errno`), if any.
    public let errno: CInt?
    /// A lower-level error that led to this one, if any.
    public let cause: (any Error & Sendable)?
    /// Where the error was raised.
    public let location: SourceLocation

    /// Creates an error.
    public init(
        code: Code,
        message: String,
        errno: CInt? = nil,
        cause: (any Error & Sendable)? = nil,
        location: SourceLocation = SourceLocation()
    ) {
        self.code = code
        self.message = message
        self.errno = errno
        self.cause = cause
        self.location = location
    }

    /// `[code] message (errno text) (caused by …) at file:line`.
    public var description: String {
        var text = "[\(code)] \(message)"
        if let errno {
            text += " (\(Self.describe(errno: errno)))"
        }
        if let cause {
            text += " (caused by: \(cause))"
        }
        return text + " at \(location)"
    }

    /// `strerror` text plus the number, e.g. `No such file or directory (errno 2)`.
    static func describe(errno: CInt) -> String {
        let text = strerror(errno).map { String(cString: $0) } ?? "unknown error"
        return "\(text) (errno \(errno))"
    }
}
