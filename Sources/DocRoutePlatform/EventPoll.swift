import CDocRouteShim
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An epoll instance (`epoll(7)`): which of many descriptors are ready to read or write.
///
/// Each registration carries a 64-bit token that comes back with its events. Registrations are
/// one-shot: an event disarms its descriptor until ``arm(_:for:token:)`` is called again, so a
/// descriptor being served by one task is never reported to a second one meanwhile. Every call
/// may be made from any thread (the kernel serialises them).
package final class EventPoll: Sendable {
    /// What a descriptor is waited for, or was found to be.
    package struct Events: OptionSet, Sendable, Hashable {
        package let rawValue: UInt32
        package init(rawValue: UInt32) { self.rawValue = rawValue }

        package static let readable = Events(rawValue: docroute_epoll_in)
        package static let writable = Events(rawValue: docroute_epoll_out)
        /// The peer closed its end (or both ends are closed): reading returns the end.
        package static let hangUp = Events(rawValue: docroute_epoll_hup | docroute_epoll_rdhup)
        package static let error = Events(rawValue: docroute_epoll_err)
    }

    /// One descriptor's readiness, as ``wait(timeoutMilliseconds:)`` returns it.
    package struct Ready: Sendable {
        package var token: UInt64
        package var events: Events
    }

    package let descriptor: FileDescriptor

    package init() throws(Errno) {
        descriptor = FileDescriptor(rawValue: try Errno.retryingOnInterrupt { docroute_epoll_open() })
    }

    /// Registers `fd` (or arms it again) for one report of `events`, carrying `token`.
    package func arm(_ fd: FileDescriptor, for events: Events, token: UInt64) throws(Errno) {
        let bits = events.rawValue | docroute_epoll_rdhup | docroute_epoll_oneshot
        switch Errno.result(retryingOnInterrupt: { docroute_epoll_control(descriptor.rawValue, docroute_epoll_modify, fd.rawValue, bits, token) }) {
        case .success: return
        case .failure(.noSuchFileOrDirectory):
            // Not registered yet.
            _ = try Errno.retryingOnInterrupt { docroute_epoll_control(descriptor.rawValue, docroute_epoll_add, fd.rawValue, bits, token) }
        case .failure(let errno):
            throw errno
        }
    }

    /// Forgets `fd`; call it before closing `fd`, so the number, once reused, starts afresh. A
    /// descriptor that was never registered is no error.
    package func remove(_ fd: FileDescriptor) {
        _ = docroute_epoll_control(descriptor.rawValue, docroute_epoll_remove, fd.rawValue, 0, 0)
    }

    /// Waits until a registered descriptor is ready or `timeoutMilliseconds` pass (-1: no limit),
    /// and returns what is ready (at most 64 at a time).
    package func wait(timeoutMilliseconds: Int32) throws(Errno) -> [Ready] {
        var tokens = [UInt64](repeating: 0, count: 64)
        var events = [UInt32](repeating: 0, count: 64)
        let count = try Errno.retryingOnInterrupt {
            docroute_epoll_wait(descriptor.rawValue, &tokens, &events, 64, timeoutMilliseconds)
        }
        return (0..<Int(count)).map { Ready(token: tokens[$0], events: Events(rawValue: events[$0])) }
    }

    /// Closes the epoll instance.
    package func close() {
        descriptor.closeIgnoringErrors()
    }
}

extension EventPoll {
    /// An `eventfd(2)` registered with the poll: ``signal()`` from any thread wakes a
    /// ``EventPoll/wait(timeoutMilliseconds:)`` with ``token``.
    package final class Waker: Sendable {
        package let descriptor: FileDescriptor
        package let token: UInt64

        /// Registered level-triggered, so a signal before the wait still wakes it.
        package init(registeredWith poll: EventPoll, token: UInt64) throws(Errno) {
            descriptor = FileDescriptor(rawValue: try Errno.retryingOnInterrupt { docroute_eventfd_open() })
            self.token = token
            do throws(Errno) {
                _ = try Errno.retryingOnInterrupt {
                    docroute_epoll_control(poll.descriptor.rawValue, docroute_epoll_add, descriptor.rawValue, docroute_epoll_in, token)
                }
            } catch {
                descriptor.closeIgnoringErrors()
                throw error
            }
        }

        /// Wakes the waiting thread (once, however often it is called before it wakes).
        package func signal() {
            // EAGAIN: the counter is at its maximum, so the waiter is being woken already.
            _ = docroute_eventfd_signal(descriptor.rawValue)
        }

        /// Takes the signals given so far, so the next wait blocks again.
        package func drain() {
            _ = docroute_eventfd_drain(descriptor.rawValue)
        }

        package func close() {
            descriptor.closeIgnoringErrors()
        }
    }
}
