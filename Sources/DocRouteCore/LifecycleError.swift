/// A call the daemon or its socket server refuses in the state it is in (starting twice,
/// reloading after a shutdown began); `message` says what state it is in and what to do.
public struct LifecycleError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public var description: String { message }

    public init(message: String) {
        self.message = message
    }
}
