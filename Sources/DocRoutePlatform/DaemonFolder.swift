import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Creates the folders docrouted works in, and says in words what failed: which folder, as which
/// user, and what to do (a raw Foundation error names neither).
package enum DaemonFolder {
    /// A folder that could not be created or used.
    package struct Failure: Error, CustomStringConvertible, Sendable {
        package var path: String
        package var description: String

        package init(path: String, description: String) {
            self.path = path
            self.description = description
        }
    }

    /// Creates `path` and its missing parents (mode 0755, less the umask).
    ///
    /// - Parameter what: the configuration key or role, for messages ("state_directory").
    /// - Returns: true when the folder was created now, false when it was there.
    @discardableResult
    package static func create(_ path: String, what: String) throws(Failure) -> Bool {
        var info = stat()
        if stat(path, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFDIR else {
                throw Failure(path: path, description: "the \(what) \(path) is not a folder; remove what is there or change \(what) in the configuration")
            }
            return false
        }
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty, parent != path { try create(parent, what: what) }
        var result: Int32
        repeat { result = mkdir(path, 0o755) } while result != 0 && errno == EINTR
        guard result == 0 || errno == EEXIST else {
            let code = errno
            throw Failure(path: path, description: """
                cannot create the \(what) \(path): \(String(cString: strerror(code))) (docrouted runs as uid \(getuid())); \
                create it and give it to docrouted's user (systemd-tmpfiles --create docroute.conf does for the shipped paths), \
                or run docrouted as a user that may write there; docrouted --check lists every folder it needs
                """)
        }
        return result == 0
    }

    /// Whether docrouted may create and remove entries in `path` (an inbox must let it remove
    /// what it delivered).
    package static func isWritable(_ path: String) -> Bool {
        access(path, W_OK | X_OK) == 0
    }
}
