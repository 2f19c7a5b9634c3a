import Synchronization

/// A pause between two looks for work that ends early when something may have changed: the
/// fleet's dispatcher and launcher sleep on one while they poll (their backoff), and a `NOTIFY`,
/// a subscription, an acknowledgement or a local commit pokes it. A poke while nobody waits is
/// kept, so the next wait ends at once: an event is never lost between two looks.
final class WakeUpSignal: Sendable {
    private struct State {
        var woken = false
        var waiter: CheckedContinuation<Void, Never>?
        /// Which wait the waiter belongs to: a timer of an earlier wait, firing late, must not end
        /// a later one.
        var wait: UInt64 = 0
    }

    private let state = Mutex(State())

    init() {}

    /// Ends the current wait, or else the next one as soon as it starts. Callable from anywhere.
    func poke() {
        state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.woken = true
            return state.waiter.take()
        }?.resume()
    }

    /// Waits until poked, `duration` has passed or the task is cancelled; true when poked.
    @discardableResult
    func sleep(upTo duration: Duration) async -> Bool {
        let wait: UInt64? = state.withLock { state in
            if state.woken {
                state.woken = false
                return nil
            }
            state.wait &+= 1
            return state.wait
        }
        guard let wait else { return true }
        let timer = Task { [weak self] in
            guard (try? await Task.sleep(for: duration)) != nil else { return }
            self?.timeUp(wait)
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    // Poked or timed out between the check above and here: no wait at all.
                    guard !state.woken, state.wait == wait else { return true }
                    state.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            poke()
        }
        timer.cancel()
        return state.withLock { state in
            defer { state.woken = false }
            return state.woken
        }
    }

    /// `wait`'s time is up: it ends, unless it has ended already.
    private func timeUp(_ wait: UInt64) {
        state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.wait == wait else { return nil }
            // A timer that fires before its wait was installed ends it as it starts.
            state.wait &+= 1
            return state.waiter.take()
        }?.resume()
    }
}
