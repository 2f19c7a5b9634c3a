import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Calls on a whole path, for the paths the administrator configures (inboxes, the state and
// runtime folders, a handler's program): every folder on the way is the administrator's to link,
// so these follow symbolic links as the shell would, unless they say otherwise. Files an untrusted
// user controls are reached with the `*at` calls of FileDescriptor+Syscalls.swift instead. Each
// call is retried on `EINTR` and throws the `Errno` it failed with.

extension FilePath {
    /// `mkdir(2)` of this path (its parent must exist), with `permissions` less the umask; `false`
    /// when the name exists already (whatever it is).
    @discardableResult
    package func makeDirectory(permissions: mode_t) throws(Errno) -> Bool {
        let result = withPlatformString { cPath in Errno.result { mkdir(cPath, permissions) } }
        switch result {
        case .success: return true
        case .failure(.fileExists): return false
        case .failure(let errno): throw errno
        }
    }

    /// `realpath(3)`: the absolute path this one names, every symbolic link, `.` and `..` on the
    /// way resolved (for a link a person named, which is theirs to follow).
    package func resolvingSymbolicLinks() throws(Errno) -> FilePath {
        let resolved = withPlatformString { cPath in realpath(cPath, nil) }
        guard let resolved else { throw Errno(rawValue: Glibc.errno) }
        defer { free(resolved) }
        return FilePath(platformString: resolved)
    }

    /// `getcwd(3)`: the process's current folder.
    package static func currentDirectory() throws(Errno) -> FilePath {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { throw Errno(rawValue: Glibc.errno) }
        return buffer.withUnsafeBufferPointer { FilePath(platformString: $0.baseAddress!) }
    }

    /// `rename(2)` of this path to `newPath`, replacing what is there; a symbolic link is renamed
    /// itself, never its target.
    package func rename(to newPath: FilePath) throws(Errno) {
        _ = try withPlatformString { cFrom in
            newPath.withPlatformString { cTo in Errno.result { Glibc.rename(cFrom, cTo) } }
        }.get()
    }

    /// `unlink(2)` of this path; `false` when nothing was there.
    @discardableResult
    package func unlink() throws(Errno) -> Bool {
        switch withPlatformString({ cPath in Errno.result { Glibc.unlink(cPath) } }) {
        case .success: return true
        case .failure(.noSuchFileOrDirectory): return false
        case .failure(let errno): throw errno
        }
    }

    /// `lchown(2)`: gives the file, or a symbolic link itself, to another owner.
    package func changeOwnerOfLink(userID: UInt32, groupID: UInt32) throws(Errno) {
        _ = try withPlatformString { cPath in Errno.result { lchown(cPath, uid_t(userID), gid_t(groupID)) } }.get()
    }

    /// `chmod(2)`: sets the permission bits, whatever the umask made of them.
    package func changeMode(_ mode: mode_t) throws(Errno) {
        _ = try withPlatformString { cPath in Errno.result { chmod(cPath, mode) } }.get()
    }

    /// `access(2)`: throws the `Errno` that says why this process (by its real ids) may not do
    /// `wanted` with the path (`ENOENT` when it does not exist, `EACCES` when it may not).
    package func checkAccess(_ wanted: FileAccess) throws(Errno) {
        _ = try withPlatformString { cPath in Errno.result { access(cPath, wanted.rawValue) } }.get()
    }

    /// Whether ``checkAccess(_:)`` passes.
    package func isAccessible(_ wanted: FileAccess) -> Bool {
        do throws(Errno) {
            try checkAccess(wanted)
            return true
        } catch {
            return false
        }
    }

    /// `stat(2)`, or `lstat(2)` without `followingSymbolicLinks`, of this path; nil when nothing
    /// is there (`ENOENT`, or `ENOTDIR` for a path through a file).
    package func status(followingSymbolicLinks: Bool) throws(Errno) -> FileStatus? {
        do throws(Errno) {
            return FileStatus(try stat(followTargetSymlink: followingSymbolicLinks))
        } catch .noSuchFileOrDirectory, .notDirectory {
            return nil
        }
    }
}
