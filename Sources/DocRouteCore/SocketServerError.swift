/// Why the socket server could not listen; `message` says what to do.
public struct SocketServerError: Error, CustomStringConvertible {
    public var message: String
    /// The `errno` of the failed system call, when one failed.
    public var errno: Int32?
    public var description: String { message }

    public init(message: String, errno: Int32? = nil) {
        self.message = message
        self.errno = errno
    }
}
