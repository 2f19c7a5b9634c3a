import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The signals the daemon sends or sets aside, by name rather than by number.
package enum ProcessSignal: Sendable, Hashable {
    /// `SIGHUP`: docrouted's "reload".
    case hangUp
    /// `SIGTERM`: the polite request to end.
    case terminate
    /// `SIGPIPE`: a write to a socket or pipe nobody reads any more.
    case brokenPipe

    /// The signal's number.
    package var number: Int32 {
        switch self {
        case .hangUp: SIGHUP
        case .terminate: SIGTERM
        case .brokenPipe: SIGPIPE
        }
    }

    /// Sets the signal's disposition to "ignore" for the whole process (`sigaction(2)` with
    /// `SIG_IGN`); a handler installed later (a `UnixSignalsSequence`) takes over from it.
    package func ignore() throws(Errno) {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = SIG_IGN
        _ = try Errno.retryingOnInterrupt { sigemptyset(&action.sa_mask) }
        _ = try Errno.retryingOnInterrupt { sigaction(number, &action, nil) }
    }

    /// Sends the signal to process `pid` (`kill(2)`); `false` when that process is gone
    /// (`ESRCH`: it ended, and may have been reaped, before the signal).
    @discardableResult
    package func send(to pid: Int32) throws(Errno) -> Bool {
        switch Errno.result(retryingOnInterrupt: { kill(pid, number) }) {
        case .success: return true
        case .failure(.noSuchProcess): return false
        case .failure(let errno): throw errno
        }
    }
}
