import DocRoutePlatform
import Foundation
import Logging
import Synchronization
import SystemPackage

/// Suspends tasks until a socket is ready to read or write, for the one socket SwiftNIO cannot
/// serve: the descriptor socket, whose reads must be `recvmsg(2)` with a control buffer (NIO's
/// stream channels read with `read(2)`, and the kernel drops descriptors passed to a read without
/// one).
///
/// One thread waits in `epoll_wait(2)` for every socket at once and resumes the task waiting for
/// each; all reading, framing and answering happens in those tasks, on Swift's cooperative pool.
/// So a thousand idle connections cost no thread each, only a registration. A wait may carry a
/// deadline (an idle connection's last moment); the thread wakes for the earliest one.
package final class SocketReadiness: Sendable {
    /// How a wait ended.
    package enum Outcome: Sendable, Equatable {
        case ready
        /// The deadline passed first.
        case timedOut
        /// The waiting task was cancelled, or the poller stopped.
        case cancelled
    }

    struct Waiter {
        var continuation: CheckedContinuation<Outcome, Never>
        var deadline: ContinuousClock.Instant?
    }

    struct State {
        var waiters: [UInt64: Waiter] = [:]
        /// Waits cancelled before their continuation was stored.
        var cancelledEarly: Set<UInt64> = []
        /// Token 0 is the waker's.
        var nextToken: UInt64 = 1
        /// When the polling thread will wake by itself; nil while it waits without a limit.
        var wakesAt: ContinuousClock.Instant?
        var stopped = false
    }

    let poll: EventPoll
    let waker: EventPoll.Waker
    let state = Mutex(State())
    let logger: Logger

    /// Starts the polling thread (`docroute-fd-poll`).
    package init(logger: Logger) throws(Errno) {
        let poll = try EventPoll()
        do {
            waker = try EventPoll.Waker(registeredWith: poll, token: 0)
        } catch {
            poll.close()
            throw error
        }
        self.poll = poll
        self.logger = logger
        let thread = Thread { [self] in pollUntilStopped() }
        thread.name = "docroute-fd-poll"
        thread.start()
    }

    /// Waits until `fd` is ready for `events` (or is closed by its peer, or has an error: the next
    /// read or write tells which), until `deadline` passes, or until the task is cancelled.
    package func wait(for events: EventPoll.Events, on fd: FileDescriptor, until deadline: ContinuousClock.Instant?) async -> Outcome {
        let token = state.withLock { state in
            defer { state.nextToken += 1 }
            return state.nextToken
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                // Whether the polling thread must wake to take an earlier deadline; nil: no wait.
                let wakeThread: Bool? = state.withLock { state in
                    if state.stopped || state.cancelledEarly.remove(token) != nil { return nil }
                    state.waiters[token] = Waiter(continuation: continuation, deadline: deadline)
                    guard let deadline else { return false }
                    return state.wakesAt.map { deadline < $0 } ?? true
                }
                guard let wakeThread else {
                    continuation.resume(returning: .cancelled)
                    return
                }
                do {
                    try poll.arm(fd, for: events, token: token)
                } catch {
                    // The descriptor cannot be polled (closed under us): let the caller's next
                    // read or write say what is wrong.
                    state.withLock { $0.waiters.removeValue(forKey: token) }?.continuation.resume(returning: .ready)
                    return
                }
                if wakeThread { waker.signal() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let waiter = state.waiters.removeValue(forKey: token) else {
                    state.cancelledEarly.insert(token)
                    return nil
                }
                return waiter
            }
            waiter?.continuation.resume(returning: .cancelled)
        }
    }

    /// Forgets `fd`: call it before closing `fd`, so that the number, once the kernel hands it out
    /// again, is not reported for the old registration.
    package func forget(_ fd: FileDescriptor) {
        poll.remove(fd)
    }

    /// Ends the polling thread; every wait, now and later, ends as ``Outcome/cancelled``.
    package func stop() {
        state.withLock { $0.stopped = true }
        waker.signal()
    }

    func pollUntilStopped() {
        while true {
            let timeout = state.withLock { state -> Int32 in
                let earliest = state.waiters.values.compactMap(\.deadline).min()
                state.wakesAt = earliest
                guard let earliest else { return -1 }
                let left = earliest - .now
                guard left > .zero else { return 0 }
                // Rounded up, so the thread does not wake a moment early and wait again.
                let (seconds, attoseconds) = left.components
                return Int32(clamping: seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
            }
            let ready: [EventPoll.Ready]
            do {
                ready = try poll.wait(timeoutMilliseconds: timeout)
            } catch {
                // Only a broken epoll descriptor fails here; nothing could be waited for again.
                logger.critical("the descriptor socket's poller failed: \(error); its connections are closed")
                state.withLock { $0.stopped = true }
                ready = []
            }
            var resumed: [(CheckedContinuation<Outcome, Never>, Outcome)] = []
            let stopped = state.withLock { state -> Bool in
                for event in ready {
                    if event.token == waker.token {
                        waker.drain()
                    } else if let waiter = state.waiters.removeValue(forKey: event.token) {
                        resumed.append((waiter.continuation, .ready))
                    }
                }
                let now = ContinuousClock.now
                for (token, waiter) in state.waiters where waiter.deadline.map({ $0 <= now }) == true {
                    state.waiters[token] = nil
                    resumed.append((waiter.continuation, .timedOut))
                }
                if state.stopped {
                    for waiter in state.waiters.values { resumed.append((waiter.continuation, .cancelled)) }
                    state.waiters = [:]
                }
                return state.stopped
            }
            for (continuation, outcome) in resumed { continuation.resume(returning: outcome) }
            if stopped { break }
        }
    }

    deinit {
        // Here rather than when the thread ends: a ``forget(_:)`` after that must still reach this
        // epoll instance, never a descriptor that took its number since.
        waker.close()
        poll.close()
    }
}
