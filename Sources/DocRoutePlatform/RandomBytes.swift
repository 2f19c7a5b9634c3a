import CDocRouteShim
import SystemPackage

/// Random bytes from the kernel's generator, many per system call.
///
/// `SystemRandomNumberGenerator` makes one `getrandom(2)` call per `next()`; callers that need
/// random bytes for every file of a burst take them in bulk here.
package enum RandomBytes {
    /// Fills `buffer` with `getrandom(2)`, retrying on `EINTR` and after short reads.
    /// - Throws: the `errno` of a refusal (`ENOSYS` before Linux 3.17, `EPERM` under a seccomp
    ///   filter that forbids the call).
    package static func fill(_ buffer: UnsafeMutableRawBufferPointer) throws(Errno) {
        guard let base = buffer.baseAddress else { return }
        var filled = 0
        while filled < buffer.count {
            filled += try Errno.retryingOnInterrupt { docroute_random_bytes(base + filled, buffer.count - filled) }
        }
    }
}
