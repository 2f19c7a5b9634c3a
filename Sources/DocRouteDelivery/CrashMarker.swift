import DocRoutePlatform
import Logging
import SystemPackage

/// Tells a crash from a kill across a restart: `<state_directory>/crash-marker` gets one byte (the
/// signal number) from a signal handler when docrouted crashes (SIGSEGV, SIGBUS, SIGILL, SIGTRAP,
/// SIGFPE, SIGABRT). A SIGKILL or a power loss writes nothing. Read and emptied at every start.
package enum CrashMarker {
    static let fileName = "crash-marker"

    /// The signal that ended the last run, if it crashed; then empties the marker and installs
    /// the handlers for this run. The marker's descriptor stays open for the process's life.
    static func takeAndArm(stateDirectory: String, logger: Logger) -> Int32? {
        let path = stateDirectory + "/" + fileName
        let file: FileDescriptor
        do {
            file = try FileDescriptor.open(atPath: FilePath(path), .readWrite, options: [.create, .append], permissions: 0o600)
        } catch {
            logger.warning("crash marker \(path) cannot be opened: \(error); a crash will be told from a kill by repetition only")
            return nil
        }
        var byte: UInt8 = 0
        let read = try? withUnsafeMutableBytes(of: &byte) { buffer in try file.read(into: buffer, atOffset: 0) }
        let crashedWith: Int32? = read == 1 ? Int32(byte) : nil
        // Best effort: a marker that stays says "crashed" once more at the next start, no worse.
        _ = try? file.truncate(to: 0)
        _ = try? file.sync()
        // The descriptor stays open for the process's life: the signal handlers write to it.
        do throws(Errno) {
            try CrashSignals.install(writingTo: file)
        } catch {
            logger.warning("crash marker handlers cannot be installed: \(error.systemMessage)")
        }
        return crashedWith
    }
}
