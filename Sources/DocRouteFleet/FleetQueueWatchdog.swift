import PostgresNIO
import Synchronization

/// Closes a connection on which nothing moved for `limit`: a server cut off by the network
/// answers nothing and sends nothing, and without this a call would wait for the kernel's
/// retransmissions for many minutes while every other call of the queue waits behind it.
/// Work that moves (a chunk sent or received) says so with ``touch()``.
final class FleetQueueWatchdog: Sendable {
    let limit: Duration
    let last: Mutex<ContinuousClock.Instant>
    let fired = Atomic<Bool>(false)

    init(limit: Duration) {
        self.limit = limit
        last = Mutex(.now)
    }

    /// Something moved: the limit counts from now.
    func touch() {
        last.withLock { $0 = .now }
    }

    /// Whether the watchdog closed the connection.
    var hasFired: Bool { fired.load(ordering: .acquiring) }

    /// Watches until cancelled, closing `connection` when nothing moved for `limit`.
    func watch(_ connection: PostgresConnection) async {
        let step = min(limit / 4, .seconds(1))
        while true {
            do {
                try await Task.sleep(for: step)
            } catch {
                return
            }
            let since = last.withLock { $0 }
            if ContinuousClock.now - since > limit {
                fired.store(true, ordering: .releasing)
                FleetQueue.close(connection)
                return
            }
        }
    }
}
