/// A call the daemon or its socket server refuses in the state it is in (starting twice,
/// reloading after a shutdown began); `message` says what state it is in and what to do.
package struct LifecycleError: Error, CustomStringConvertible, Sendable {
    package var message: String
    package var description: String { message }

    package init(message: String) {
        self.message = message
    }
}
