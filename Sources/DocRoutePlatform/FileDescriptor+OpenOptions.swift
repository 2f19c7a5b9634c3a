import CDocRouteShim
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// The open calls of FileDescriptor+Syscalls.swift with swift-system's typed access mode and
// options instead of raw `O_*` flags, so a caller names what it wants without the C library.
// `O_CLOEXEC` and `O_NOFOLLOW` are added as there.

extension FileDescriptor.OpenOptions {
    /// `O_NOCTTY`: a terminal device opened by accident does not become the controlling terminal.
    package static var noControllingTerminal: Self { Self(rawValue: O_NOCTTY) }
    /// `O_PATH`: a descriptor that names a file without the right to read or write it.
    package static var pathOnly: Self { Self(rawValue: docroute_o_path) }
}

extension FileDescriptor {
    /// `open(2)` of a path, never following a symbolic link as its last component
    /// (``open(atPath:flags:permissions:)``).
    package static func open(
        atPath path: FilePath, _ mode: AccessMode, options: OpenOptions = [], permissions: mode_t = 0o600
    ) throws(Errno) -> FileDescriptor {
        try open(atPath: path, flags: mode.rawValue | options.rawValue, permissions: permissions)
    }

    /// `openat(2)` of one name in this folder, never following a symbolic link
    /// (``open(_:flags:permissions:)``).
    package func open(
        _ name: FilePath.Component, _ mode: AccessMode, options: OpenOptions = [], permissions: mode_t = 0o600
    ) throws(Errno) -> FileDescriptor {
        try open(name, flags: mode.rawValue | options.rawValue, permissions: permissions)
    }

    /// `openat2(2)` below this folder (``openBeneath(_:flags:)``); nil where the kernel lacks it.
    package func openBeneath(_ relativePath: String, _ mode: AccessMode, options: OpenOptions = []) throws(Errno) -> FileDescriptor? {
        try openBeneath(relativePath, flags: mode.rawValue | options.rawValue)
    }

    /// `open(2)` of a folder by a path that may pass through, and end in, symbolic links: for a
    /// path a client names while this thread has the client's file-system identity
    /// (``ThreadFileSystemIdentity``), which resolves it as the client's own `open` would.
    package static func openDirectoryFollowingLinks(atPath path: FilePath) throws(Errno) -> FileDescriptor {
        let raw = try path.withPlatformString { cPath in
            Errno.result { Glibc.open(cPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        }.get()
        return FileDescriptor(rawValue: raw)
    }

    /// `open(2)` of a path a person named (`docroutectl open FILE`), following symbolic links on
    /// the way and as its last component, as their own `cat` would: the file is opened with their
    /// rights, never docrouted's. `O_CLOEXEC` is added.
    package static func openFollowingLinks(
        atPath path: FilePath, _ mode: AccessMode, options: OpenOptions = []
    ) throws(Errno) -> FileDescriptor {
        let raw = try path.withPlatformString { cPath in
            Errno.result { Glibc.open(cPath, mode.rawValue | options.rawValue | O_CLOEXEC) }
        }.get()
        return FileDescriptor(rawValue: raw)
    }

    /// Whether the open file can be read through this descriptor: opened neither `O_WRONLY` nor
    /// `O_PATH` (which permits `fstat` without the kernel ever having checked read access).
    package func isOpenForReading() throws(Errno) -> Bool {
        let flags = try statusFlags()
        return flags & docroute_o_path == 0 && flags & O_ACCMODE != O_WRONLY
    }
}
