import DocRoutePlatform
import Synchronization
import SystemPackage

/// Writes reply lines to one connection of the descriptor socket, without blocking.
///
/// A reply that does not fit in the socket's buffer waits here; the task serving the connection
/// flushes it (``flush()``) when the socket can take more, before it reads the next request, so at
/// most one reply waits per connection. The serving task closes the descriptor through
/// ``close()``, under the same lock as every write, so a late write never reaches a descriptor
/// number the kernel has handed out again.
package final class DescriptorSocketWriter: Sendable {
    /// What ``flush()`` left.
    enum Flush {
        case done
        /// The socket's buffer is full: wait until it is writable, then flush again.
        case blocked
        /// The connection is gone or failed.
        case failed
    }

    struct State {
        var pending: [UInt8] = []
        var failed = false
        var closed = false
    }

    let descriptor: FileDescriptor
    let state = Mutex(State())

    init(descriptor: FileDescriptor) {
        self.descriptor = descriptor
    }

    /// Sends `bytes` now as far as the socket takes them, and keeps the rest for ``flush()``.
    /// Writes keep their order; a failed or closed connection drops them.
    func write(_ bytes: [UInt8]) {
        state.withLock { state in
            guard !state.failed, !state.closed else { return }
            guard state.pending.isEmpty else {
                state.pending += bytes
                return
            }
            do {
                let sent = try descriptor.sendWithoutBlocking(bytes[...])
                if sent < bytes.count { state.pending = Array(bytes[sent...]) }
            } catch {
                Self.fail(&state, descriptor)
            }
        }
    }

    /// Sends what waits.
    func flush() -> Flush {
        state.withLock { state in
            guard !state.failed, !state.closed else { return .failed }
            while !state.pending.isEmpty {
                do {
                    let sent = try descriptor.sendWithoutBlocking(state.pending[...])
                    guard sent > 0 else { return .blocked }
                    state.pending.removeFirst(sent)
                } catch {
                    Self.fail(&state, descriptor)
                    return .failed
                }
            }
            return .done
        }
    }

    /// Whether writing failed (the peer is gone): the serving task ends the connection.
    var hasFailed: Bool { state.withLock { $0.failed } }

    static func fail(_ state: inout State, _ descriptor: FileDescriptor) {
        state.failed = true
        state.pending = []
        // The serving task, waiting to read, sees the end and closes the connection.
        descriptor.shutdownBothWays()
    }

    /// Ends the connection from anywhere: the serving task sees the end and closes it.
    func shutdown() {
        state.withLock { state in
            guard !state.closed else { return }
            descriptor.shutdownBothWays()
        }
    }

    /// Closes the descriptor (the serving task, once it is done with the connection).
    func close() {
        state.withLock { state in
            guard !state.closed else { return }
            state.closed = true
            state.pending = []
            descriptor.closeIgnoringErrors()
        }
    }
}
