import DocRoutePlatform
import Logging
import NIOPosix
import Synchronization
import SystemPackage

/// Keeps a node-exporter textfile-collector file (`metrics_textfile`) up to date: after a change,
/// at most once per `interval` while changes keep coming, nothing at all while the daemon is idle
/// (no timer; a write is planned only by a change). Each write replaces the file atomically.
package final class MetricsTextfileWriter: Sendable {
    /// The file written.
    package let path: FilePath
    let render: @Sendable () -> [UInt8]
    let logger: Logger
    /// Where the write runs: it blocks on fsync, which must not hold up an async executor.
    let pool: NIOThreadPool
    /// Whether ``pool`` was made here (and is shut down with the writer) rather than handed in.
    let ownsPool: Bool
    private let state: Mutex<State>

    struct State {
        var debounce: WriteDebounce<ContinuousClock.Instant>
        /// The last failure logged, so a lasting problem is logged once, not every second.
        var lastFailure: String?
        /// Writes done, for tests and status.
        var writes = 0
        /// Writes begun and not yet finished, and who waits for them (``flush()``).
        var writing = 0
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
    }

    /// - Parameters:
    ///   - path: the `.prom` file; its folder must exist.
    ///   - interval: the shortest time between two writes.
    ///   - pool: the daemon's thread pool; nil makes one thread of the writer's own.
    ///   - render: the file's content at the time of writing.
    package init(path: FilePath, interval: Duration = .seconds(1), pool: NIOThreadPool? = nil, logger: Logger,
                render: @escaping @Sendable () -> [UInt8]) {
        self.path = path
        self.render = render
        self.logger = logger
        self.state = Mutex(State(debounce: WriteDebounce(interval: interval)))
        if let pool {
            self.pool = pool
            self.ownsPool = false
        } else {
            self.pool = NIOThreadPool(numberOfThreads: 1)
            self.pool.start()
            self.ownsPool = true
        }
    }

    deinit {
        if ownsPool { pool.shutdownGracefully { _ in } }
    }

    /// How many times the file was written.
    package var writeCount: Int { state.withLock { $0.writes } }

    /// Something the file shows changed: plans a write unless one is planned.
    package func changed() {
        let now = ContinuousClock.now
        guard let due = state.withLock({ $0.debounce.changed(at: now) }) else { return }
        Task { [self] in
            try? await Task.sleep(until: due, clock: .continuous)
            await writeIfDirty()
        }
    }

    /// Writes now if anything changed since the last write (at shutdown, so the file ends exact).
    package func flush() async {
        await writeIfDirty()
        // A write the debounce timer began just before is not this one: wait for it too, so the
        // file holds what was changed before the call.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state -> Bool in
                guard state.writing > 0 else { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }

    func writeIfDirty() async {
        let now = ContinuousClock.now
        let begun = state.withLock { state -> Bool in
            guard state.debounce.writing(at: now) else { return false }
            state.writing += 1
            return true
        }
        guard begun else { return }
        defer {
            let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.writing -= 1
                guard state.writing == 0 else { return [] }
                defer { state.idleWaiters = [] }
                return state.idleWaiters
            }
            for waiter in waiters { waiter.resume() }
        }
        let path = self.path
        let render = self.render
        do {
            try await pool.runIfActive { try AtomicFile.replace(path, with: render()) }
            let recovered = state.withLock { state -> Bool in
                state.writes += 1
                defer { state.lastFailure = nil }
                return state.lastFailure != nil
            }
            if recovered { logger.notice("metrics file written again", metadata: ["path": "\(path)"]) }
        } catch {
            let message = "\(error)"
            let repeated = state.withLock { state -> Bool in
                defer { state.lastFailure = message }
                return state.lastFailure == message
            }
            if !repeated {
                logger.warning("metrics file cannot be written: \(message); its folder must exist and be writable by docrouted (under systemd, allow it with ReadWritePaths=)",
                               metadata: ["path": "\(path)"])
            }
        }
    }
}
