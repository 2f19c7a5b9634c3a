import CDocRouteSystemd
import DocRoutePlatform
import SystemPackage

/// Tells systemd about the service's state through `sd_notify(3)`.
///
/// Every call is a no-op when the process was not started with `NOTIFY_SOCKET` (run by hand, in a
/// test, under `Type=simple`), so a daemon can call it unconditionally. The environment is left in
/// place because a service notifies many times over its life; with systemd's default
/// `NotifyAccess=main`, anything the daemon starts cannot speak for it anyway.
package struct SystemdNotifier: Sendable {
    /// A notifier for the current process.
    package init() {}

    /// Whether a service manager is listening, i.e. `NOTIFY_SOCKET` is set.
    package var isEnabled: Bool {
        guard let socket = ProcessEnvironment.value("NOTIFY_SOCKET") else { return false }
        return !socket.isEmpty
    }

    /// How often to send ``watchdogPing()``: half of `WATCHDOG_USEC`, as `sd_watchdog_enabled(3)`
    /// advises, or `nil` when the watchdog is off for this process.
    package var watchdogInterval: Duration? {
        var microseconds: UInt64 = 0
        guard sd_watchdog_enabled(0, &microseconds) > 0, microseconds > 0 else { return nil }
        return .microseconds(Int64(clamping: microseconds / 2))
    }

    /// Start-up is complete: sends `READY=1`.
    /// - Returns: whether a message was sent (`false` without `NOTIFY_SOCKET`).
    @discardableResult
    package func ready() throws(SystemdError) -> Bool {
        try send(.ready)
    }

    /// A configuration reload has begun: sends `RELOADING=1` and `MONOTONIC_USEC=` now.
    ///
    /// Follow it with ``ready()`` once the reload is done.
    /// - Returns: whether a message was sent.
    @discardableResult
    package func reloading() throws(SystemdError) -> Bool {
        try send(.reloading(monotonicMicroseconds: Self.monotonicMicroseconds()))
    }

    /// Shutdown has begun: sends `STOPPING=1`.
    /// - Returns: whether a message was sent.
    @discardableResult
    package func stopping() throws(SystemdError) -> Bool {
        try send(.stopping)
    }

    /// Sets the one-line status that `systemctl status` shows: sends `STATUS=…`.
    /// - Returns: whether a message was sent.
    @discardableResult
    package func status(_ text: String) throws(SystemdError) -> Bool {
        try send(.status(text))
    }

    /// Keeps the watchdog from firing: sends `WATCHDOG=1`. Call it every ``watchdogInterval``.
    /// - Returns: whether a message was sent.
    @discardableResult
    package func watchdogPing() throws(SystemdError) -> Bool {
        try send(.watchdogPing)
    }

    /// Asks for more time for the start, reload or stop under way: sends `EXTEND_TIMEOUT_USEC=…`.
    /// - Returns: whether a message was sent.
    @discardableResult
    package func extendTimeout(microseconds: UInt64) throws(SystemdError) -> Bool {
        try send(.extendTimeout(microseconds: microseconds))
    }

    /// Asks for more time for the start, reload or stop under way (rounded down to microseconds).
    /// - Returns: whether a message was sent.
    @discardableResult
    package func extendTimeout(by duration: Duration) throws(SystemdError) -> Bool {
        let (seconds, attoseconds) = duration.components
        let microseconds = max(0, seconds) &* 1_000_000 &+ max(0, attoseconds) / 1_000_000_000_000
        return try extendTimeout(microseconds: UInt64(clamping: microseconds))
    }

    /// Sends any state change.
    /// - Returns: whether a message was sent (`false` without `NOTIFY_SOCKET`).
    @discardableResult
    package func send(_ change: ServiceStateChange) throws(SystemdError) -> Bool {
        // sd_notify is not variadic (unlike sd_notifyf), so Swift formats the text and passes it whole.
        let result = sd_notify(0, change.text)
        if result < 0 {
            throw SystemdError(
                code: .notifyFailed,
                message: "could not send '\(change.text.split(separator: "\n").first ?? "")' to the "
                    + "service manager at NOTIFY_SOCKET; check that the socket exists and that the unit's "
                    + "NotifyAccess= lets this process notify",
                cause: Errno(rawValue: -result)
            )
        }
        return result > 0
    }

    /// `CLOCK_MONOTONIC` now, in microseconds, the clock systemd compares `MONOTONIC_USEC=` with.
    static func monotonicMicroseconds() -> UInt64 {
        let (seconds, attoseconds) = SystemClock.monotonic.now().components
        return UInt64(seconds) * 1_000_000 + UInt64(attoseconds) / 1_000_000_000_000
    }
}
