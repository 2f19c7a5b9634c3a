import Foundation
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// One docrouted per state directory (a second would deliver every file again): an exclusive `flock` on
/// `<state_directory>/docrouted.lock`, taken before anything else is touched and held for the
/// daemon's life (the kernel lets go when the process ends, however it ends). The file holds the
/// holder's pid, for the message a second daemon prints.
package final class StateDirectoryLock: Sendable {
    /// The lock file's name in the state directory.
    package static let fileName = "docrouted.lock"

    package let path: String
    let descriptor: Int32

    /// Why the lock could not be taken.
    package struct Refusal: Error, CustomStringConvertible {
        /// The pid of the daemon holding it, when known.
        package var holder: Int32?
        package var description: String
    }

    init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    /// Creates the state directory if needed (with `mode`, whatever the umask) and takes the lock,
    /// or says who holds it.
    package static func acquire(stateDirectory: String, mode: mode_t = 0o700) throws(Refusal) -> StateDirectoryLock {
        do {
            // A folder made now gets `mode` whatever the umask; one that exists keeps its own
            // (systemd's StateDirectoryMode= decides under the unit).
            if try DaemonFolder.create(stateDirectory, what: "state_directory") { chmod(stateDirectory, mode) }
        } catch {
            throw Refusal(description: error.description)
        }
        let path = stateDirectory + "/" + fileName
        var descriptor: Int32
        repeat {
            descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        } while descriptor < 0 && errno == EINTR
        guard descriptor >= 0 else {
            throw Refusal(description: "\(path) cannot be opened: \(String(cString: strerror(errno))); check the state directory's owner and mode")
        }
        var result: Int32
        repeat { result = flock(descriptor, LOCK_EX | LOCK_NB) } while result != 0 && errno == EINTR
        guard result == 0 else {
            let code = errno
            let holder = readPID(descriptor)
            close(descriptor)
            if code == EWOULDBLOCK {
                throw Refusal(holder: holder, description: "another docrouted (pid \(holder.map(String.init) ?? "unknown")) serves \(stateDirectory); stop it first, or give this one another state_directory")
            }
            throw Refusal(description: "\(path) cannot be locked: \(String(cString: strerror(code)))")
        }
        // Ours now: say who holds it.
        let text = Array("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = text.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        return StateDirectoryLock(path: path, descriptor: descriptor)
    }

    static func readPID(_ descriptor: Int32) -> Int32? {
        var bytes = [UInt8](repeating: 0, count: 32)
        let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Int32(String(decoding: bytes.prefix(count), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
