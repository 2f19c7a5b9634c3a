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

    /// The socket file bound at `path` now; nil when there is none (or it is not a socket, or it
    /// cannot be looked at: then it cannot be told apart from another daemon's either).
    package init?(boundAt path: String) {
        guard let status = try? FilePath(path).status(followingSymbolicLinks: false), status.fileType == .socket else { return nil }
        self.path = path
        device = status.device
        inode = status.inode
    }

    /// Looks at `path`: removes a socket file that no process accepts on any more (a crash left
    /// it), and leaves anything else as it is.
    package static func removeStale(at path: String) -> Probe {
        // A path that cannot be looked at is left to `bind`, whose error then says why.
        guard let status = try? FilePath(path).status(followingSymbolicLinks: false) else { return .absent }
        guard status.fileType == .socket else { return .notASocket }
        if acceptsConnections(at: path) { return .live }
        // A removal that fails leaves the file in place, and binding the path then fails with
        // the reason (EADDRINUSE, EACCES): nothing is lost by not saying it here too.
        _ = try? FilePath(path).withPlatformString { cPath in Errno.result { unlink(cPath) } }.get()
        return .removedStale
    }

    /// Whether a process accepts connections on the Unix socket at `path`: a blocking `connect`
    /// from a socket of its own, closed at once. A socket that cannot be made, or a path too long
    /// to connect to, answers no (binding it says what is wrong).
    package static func acceptsConnections(at path: String) -> Bool {
        guard let probe = try? FileDescriptor.unixStreamSocket(nonBlocking: false) else { return false }
        defer { probe.closeIgnoringErrors() }
        return (try? probe.connect(unixPath: path)) != nil
    }

    /// Lets every local user connect: who may do what is decided by peer credentials.
    package func allowEveryone() throws(Errno) {
        try FilePath(path).changeMode(0o666)
    }

    /// Removes the file if the path still names this socket file.
    package func removeIfStillOurs() {
        guard let now = UnixSocketFile(boundAt: path), now == self else { return }
        // Only a tidy-up at stop: a file left behind is found stale and replaced at the next start.
        _ = try? FilePath(path).withPlatformString { cPath in Errno.result { unlink(cPath) } }.get()
    }
}
