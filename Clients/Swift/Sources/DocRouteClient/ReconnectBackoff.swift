/// How long ``DocumentHandlerRunner`` waits before connecting again: doubling from
/// ``initial`` up to ``maximum``, starting over after each successful subscription.
public struct ReconnectBackoff: Sendable, Hashable {
    /// The wait after the first failure.
    public var initial: Duration
    /// The longest wait.
    public var maximum: Duration

    /// Creates a backoff; the default waits 100 ms, then 200 ms, … up to 5 s.
    public init(initial: Duration = .milliseconds(100), maximum: Duration = .seconds(5)) {
        precondition(initial > .zero && maximum >= initial, "backoff needs 0 < initial <= maximum")
        self.initial = initial
        self.maximum = maximum
    }

    /// The wait after `failures` consecutive failures (1 for the first).
    public func delay(afterFailures failures: Int) -> Duration {
        var delay = initial
        for _ in 1..<max(failures, 1) {
            delay = delay * 2
            if delay >= maximum { return maximum }
        }
        return min(delay, maximum)
    }
}
