import Foundation
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// One docrouted per state directory (a second would deliver every file again): an exclusive
/// `flock` on the state directory itself (its open descriptor), then on
/// `<state_directory>/docrouted.lock`, taken before anything else is touched and held for the
/// daemon's life (the kernel lets go when the process ends, however it ends). The file holds the holder's pid, for the message a second daemon prints.
///
/// The directory's lock is the one that counts: a lock on the file alone belongs to whatever
/// file has the name when it is opened, so a lock file replaced (renamed over) under a running
/// daemon let a second process lock the new file and rebuild the ledger beside it. The file is
/// locked too, for tools that wait on it (`flock docrouted.lock`).
package final class StateDirectoryLock: Sendable {
    /// The lock file's name in the state directory.
    package static let fileName = "docrouted.lock"

    package let path: String
    let descriptor: Int32
    /// The state directory's descriptor, which holds the lock that counts.
    let folder: Int32

    /// Why the lock could not be taken.
    package struct Refusal: Error, CustomStringConvertible {
        /// The pid of the daemon holding it, when known.
        package var holder: Int32?
        package var description: String
    }

    init(path: String, descriptor: Int32, folder: Int32) {
        self.path = path
        self.descriptor = descriptor
        self.folder = folder
    }

    deinit {
        close(descriptor)
        close(folder)
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
        var folder: Int32
        repeat {
            folder = open(stateDirectory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        } while folder < 0 && errno == EINTR
        guard folder >= 0 else {
            throw Refusal(description: "\(stateDirectory) cannot be opened: \(String(cString: strerror(errno))); check the state directory's owner and mode")
        }
        if let refusal = lock(folder, what: stateDirectory, stateDirectory: stateDirectory, pidFile: path) {
            close(folder)
            throw refusal
        }
        var descriptor: Int32
        repeat {
            descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        } while descriptor < 0 && errno == EINTR
        guard descriptor >= 0 else {
            let code = errno
            close(folder)
            throw Refusal(description: "\(path) cannot be opened: \(String(cString: strerror(code))); check the state directory's owner and mode")
        }
        if let refusal = lock(descriptor, what: path, stateDirectory: stateDirectory, pidFile: path) {
            close(descriptor)
            close(folder)
            throw refusal
        }
        // Ours now: say who holds it.
        let text = Array("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = text.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        return StateDirectoryLock(path: path, descriptor: descriptor, folder: folder)
    }

    /// Takes the exclusive lock on `descriptor`; the refusal to throw when another holds it.
    private static func lock(_ descriptor: Int32, what: String, stateDirectory: String, pidFile: String) -> Refusal? {
        var result: Int32
        repeat { result = flock(descriptor, LOCK_EX | LOCK_NB) } while result != 0 && errno == EINTR
        guard result != 0 else { return nil }
        let code = errno
        guard code == EWOULDBLOCK else {
            return Refusal(description: "\(what) cannot be locked: \(String(cString: strerror(code)))")
        }
        var file: Int32
        repeat { file = open(pidFile, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK) } while file < 0 && errno == EINTR
        let holder = file >= 0 ? readPID(file) : nil
        if file >= 0 { close(file) }
        return Refusal(holder: holder, description: "another docrouted (pid \(holder.map(String.init) ?? "unknown")) serves \(stateDirectory); stop it first, or give this one another state_directory")
    }

    static func readPID(_ descriptor: Int32) -> Int32? {
        var bytes = [UInt8](repeating: 0, count: 32)
        let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Int32(String(decoding: bytes.prefix(count), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
