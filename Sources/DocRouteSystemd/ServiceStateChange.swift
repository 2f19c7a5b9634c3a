/// One message for the service manager's notification socket, as `sd_notify(3)` defines them.
///
/// Building the text is pure so that it can be checked byte for byte; ``SystemdNotifier`` sends it.
package struct ServiceStateChange: Hashable, Sendable, CustomStringConvertible {
    /// The newline-separated `VARIABLE=value` assignments sent as one datagram.
    package let text: String

    private init(text: String) { self.text = text }

    /// `READY=1`: start-up finished; systemd now considers a `Type=notify` unit started.
    package static let ready = ServiceStateChange(text: "READY=1")

    /// `STOPPING=1`: the service is shutting down.
    package static let stopping = ServiceStateChange(text: "STOPPING=1")

    /// `WATCHDOG=1`: the keep-alive ping that `WatchdogSec=` waits for.
    package static let watchdogPing = ServiceStateChange(text: "WATCHDOG=1")

    /// `RELOADING=1` with the `CLOCK_MONOTONIC` time at which the reload began.
    ///
    /// systemd 253 and later require `MONOTONIC_USEC=` next to `RELOADING=1` for
    /// `Type=notify-reload`, to tell this reload from an older one; systemd 252 ignores it.
    package static func reloading(monotonicMicroseconds: UInt64) -> ServiceStateChange {
        ServiceStateChange(text: "RELOADING=1\nMONOTONIC_USEC=\(monotonicMicroseconds)")
    }

    /// `STATUS=…`: a one-line status that `systemctl status` shows.
    ///
    /// Line breaks become spaces: the protocol is line-based, so a status holding `\nREADY=1` would
    /// otherwise announce readiness on the service's behalf.
    package static func status(_ status: String) -> ServiceStateChange {
        let oneLine = String(status.map { $0.isNewline ? " " : $0 })
        return ServiceStateChange(text: "STATUS=\(oneLine)")
    }

    /// `EXTEND_TIMEOUT_USEC=…`: asks for this much more time for the current start, reload or stop.
    package static func extendTimeout(microseconds: UInt64) -> ServiceStateChange {
        ServiceStateChange(text: "EXTEND_TIMEOUT_USEC=\(microseconds)")
    }

    /// The datagram text.
    package var description: String { text }
}
