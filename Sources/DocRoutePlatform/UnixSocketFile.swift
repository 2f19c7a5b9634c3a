import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A Unix socket's file in the file system, by identity: a file another daemon bound at the same
/// path since is not this one, and is never removed in its place.
package struct UnixSocketFile: Sendable, Hashable {
    package var path: String
    package var device: UInt64
    package var inode: UInt64

    /// What is at a socket path before binding it.
    package enum Probe: Sendable, Equatable {
        /// Nothing: bind away.
        case absent
        /// A socket file nobody accepts on (left by a daemon that is gone): it was removed.
        case removedStale
        /// A socket file a live process accepts on.
        case live
        /// Something that is not a socket.
        case notASocket
    }

    /// The socket file bound at `path` now; nil when there is none (or it is not a socket).
    package init?(boundAt path: String) {
        var info = stat()
        guard Glibc.lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK else { return nil }
        self.path = path
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }

    /// Looks at `path`: removes a socket file that no process accepts on any more (a crash left
    /// it), and leaves anything else as it is.
    package static func removeStale(at path: String) -> Probe {
        var info = stat()
        guard Glibc.lstat(path, &info) == 0 else { return .absent }
        guard info.st_mode & S_IFMT == S_IFSOCK else { return .notASocket }
        if let probe = try? FileDescriptor.unixStreamSocket(nonBlocking: false) {
            defer { probe.closeIgnoringErrors() }
            // A path too long to connect to cannot be bound either: binding says so.
            if (try? probe.connect(unixPath: path)) != nil { return .live }
        }
        _ = Glibc.unlink(path)
        return .removedStale
    }

    /// Lets every local user connect: who may do what is decided by peer credentials.
    package func allowEveryone() throws(Errno) {
        _ = try Errno.retryingOnInterrupt { Glibc.chmod(path, 0o666) }
    }

    /// Removes the file if the path still names this socket file.
    package func removeIfStillOurs() {
        guard let now = UnixSocketFile(boundAt: path), now == self else { return }
        _ = Glibc.unlink(path)
    }
}
