import CDocRouteShim
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Tells a crash from a kill across a restart: `<state_directory>/crash-marker` gets one byte (the
/// signal number) from a signal handler when docrouted crashes (SIGSEGV, SIGBUS, SIGILL, SIGTRAP,
/// SIGFPE, SIGABRT). A SIGKILL or a power loss writes nothing. Read and emptied at every start.
package enum CrashMarker {
    static let fileName = "crash-marker"

    /// The signal that ended the last run, if it crashed; then empties the marker and installs
    /// the handlers for this run. The marker's descriptor stays open for the process's life.
    static func takeAndArm(stateDirectory: String, logger: Logger) -> Int32? {
        let path = stateDirectory + "/" + fileName
        var descriptor: Int32
        repeat {
            descriptor = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0o600)
        } while descriptor < 0 && errno == EINTR
        guard descriptor >= 0 else {
            logger.warning("crash marker \(path) cannot be opened: \(String(cString: strerror(errno))); a crash will be told from a kill by repetition only")
            return nil
        }
        var byte: UInt8 = 0
        let read = pread(descriptor, &byte, 1, 0)
        let crashedWith: Int32? = read == 1 ? Int32(byte) : nil
        _ = ftruncate(descriptor, 0)
        _ = fsync(descriptor)
        if docroute_install_crash_marker(descriptor) != 0 {
            logger.warning("crash marker handlers cannot be installed: \(String(cString: strerror(errno)))")
        }
        return crashedWith
    }
}
