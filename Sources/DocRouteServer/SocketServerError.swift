/// Why the socket server could not listen; `message` says what to do.
package struct SocketServerError: Error, CustomStringConvertible {
    package var message: String
    /// The `errno` of the failed system call, when one failed.
    package var errno: Int32?
    package var description: String { message }

    package init(message: String, errno: Int32? = nil) {
        self.message = message
        self.errno = errno
    }
}
