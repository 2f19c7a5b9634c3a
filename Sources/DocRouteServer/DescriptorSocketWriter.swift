import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Writes reply lines to one connection of the descriptor socket.
///
/// Replies there are short and the client waits for them, so writes are plain blocking sends,
/// serialised by a lock; `SO_SNDTIMEO` bounds how long a client that stops reading can hold one.
/// The reading thread owns the descriptor and closes it; others may only shut it down.
package final class DescriptorSocketWriter: Sendable {
    let descriptor: Int32
    let failed = Mutex(false)

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    func write(_ bytes: [UInt8]) {
        failed.withLock { failed in
            guard !failed else { return }
            var sent = 0
            while sent < bytes.count {
                let count = bytes.withUnsafeBytes { buffer in
                    Glibc.send(descriptor, buffer.baseAddress! + sent, buffer.count - sent, Int32(MSG_NOSIGNAL))
                }
                if count < 0 {
                    if errno == EINTR { continue }
                    // Gone, or not reading for SO_SNDTIMEO: drop it, as a closed NIO channel drops writes.
                    failed = true
                    Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
                    return
                }
                sent += count
            }
        }
    }

    /// Ends the connection; the reading thread sees the end and closes the descriptor.
    func shutdown() {
        Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
    }
}
