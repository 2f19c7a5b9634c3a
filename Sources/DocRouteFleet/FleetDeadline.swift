import Synchronization

/// Work on a PostgreSQL connection given a time limit, and given up at the limit without waiting
/// for it to end: a query sent on a connection the server cut off while it was idle (`pg_ctl stop`,
/// a restart) may never end, not even once the connection is closed, and a task group waiting
/// for it would hang its caller and, at shutdown, the daemon.
final class FleetDeadline<T: Sendable>: Sendable {
    struct State: Sendable {
        var continuation: CheckedContinuation<T, any Error>?
        /// The outcome, when it came before the caller was waiting.
        var early: Result<T, any Error>?
        var ended = false
        var tasks: [Task<Void, Never>] = []
    }

    let state = Mutex(State())

    /// Runs `body` for at most `limit`. When it has not ended by then, `expired` runs (it closes
    /// the connection, which ends most hung work) and `failure()` is thrown at once; a cancelled
    /// caller gets `CancellationError` at once. `body` is cancelled either way and left to end
    /// by itself.
    static func run(within limit: Duration, expired: @escaping @Sendable () -> Void, failure: @escaping @Sendable () -> any Error,
                    _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await run(until: { (try? await Task.sleep(for: limit)) != nil }, expired: expired, failure: failure, body)
    }

    /// Runs `body` until `expiry` returns true (it returns false when cancelled, once `body` has
    /// ended); then as ``run(within:expired:failure:_:)`` at its limit.
    static func run(until expiry: @escaping @Sendable () async -> Bool, expired: @escaping @Sendable () -> Void,
                    failure: @escaping @Sendable () -> any Error, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let deadline = FleetDeadline<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                deadline.wait(continuation)
                let work = Task {
                    do {
                        deadline.end(.success(try await body()))
                    } catch {
                        deadline.end(.failure(error))
                    }
                }
                let timer = Task {
                    guard await expiry() else { return }
                    if deadline.end(.failure(failure())) { expired() }
                }
                deadline.hold([work, timer])
            }
        } onCancel: {
            deadline.end(.failure(CancellationError()))
        }
    }

    func wait(_ continuation: CheckedContinuation<T, any Error>) {
        let early = state.withLock { state -> Result<T, any Error>? in
            if let early = state.early { return early }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(with: early) }
    }

    /// Keeps the tasks to cancel when the outcome is known (at once when it is known already).
    func hold(_ tasks: [Task<Void, Never>]) {
        let ended = state.withLock { state in
            if !state.ended { state.tasks += tasks }
            return state.ended
        }
        if ended { for task in tasks { task.cancel() } }
    }

    /// The outcome; true when it is the first (the one the caller gets).
    @discardableResult
    func end(_ outcome: Result<T, any Error>) -> Bool {
        let (continuation, tasks, first) = state.withLock { state -> (CheckedContinuation<T, any Error>?, [Task<Void, Never>], Bool) in
            guard !state.ended else { return (nil, [], false) }
            state.ended = true
            let continuation = state.continuation
            state.continuation = nil
            if continuation == nil { state.early = outcome }
            defer { state.tasks = [] }
            return (continuation, state.tasks, true)
        }
        continuation?.resume(with: outcome)
        for task in tasks { task.cancel() }
        return first
    }
}
