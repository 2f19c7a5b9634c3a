import CDocRouteShim
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The handlers of the signals a crash raises (SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGFPE, SIGABRT),
/// which tell a crash from a kill across a restart: written in C by the shim, since only
/// async-signal-safe calls may run in them.
package enum CrashSignals {
    /// Installs handlers that write the signal's number, one byte, to `marker` (a file opened for
    /// that, kept open for the process's life), then pass the signal on to whatever handled it
    /// before (the Swift runtime's backtracer, or the default action).
    package static func install(writingTo marker: FileDescriptor) throws(Errno) {
        guard docroute_install_crash_marker(marker.rawValue) == 0 else { throw Errno(rawValue: Glibc.errno) }
    }

    /// Gives the calling thread an alternate signal stack if it has none, so the handlers run
    /// even when the thread overflowed its stack. Throws when the stack cannot be allocated.
    package static func ensureAlternateStack() throws(Errno) {
        guard docroute_ensure_alternate_signal_stack() == 0 else { throw Errno(rawValue: Glibc.errno) }
    }
}
