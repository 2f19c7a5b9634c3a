#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Ends the process at once, without running `atexit` handlers or flushing C streams (`_exit(2)`):
/// for a stop that must not wait for anything the process was doing, such as the ledger removed
/// under the running daemon.
package enum ImmediateExit {
    /// `_exit(2)` with `status`.
    package static func exit(status: Int32) -> Never {
        _exit(status)
    }
}
