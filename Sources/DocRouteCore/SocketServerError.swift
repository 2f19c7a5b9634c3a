/// Why the socket server could not start, said so that the operator knows what to do.
public struct SocketServerError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
