import CDocRouteShim
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The system calls of delivery, each retried on `EINTR` and turning `errno` into a ``DeliveryError``.
///
/// Every call that names a file takes a folder descriptor and one name in it (the `*at` calls), so a
/// path is never resolved twice and no symbolic link is followed by accident. `describing` is only
/// for the message of an error: the path as people should read it.
public enum SystemCall {
    /// Calls `body` until it does not fail with `EINTR`; -1 becomes the `errno` it left.
    @inline(__always)
    static func retryingOnInterrupt<Value: SignedInteger>(_ body: () -> Value) -> Result<Value, Errno> {
        while true {
            let result = body()
            if result != -1 { return .success(result) }
            let error = Errno(rawValue: Glibc.errno)
            if error != .interrupted { return .failure(error) }
        }
    }

    /// Throws a ``DeliveryError`` for a failed call, keeping the caller's location.
    @inline(__always)
    static func check<Value: SignedInteger>(
        _ operation: String,
        _ describing: @autoclosure () -> String?,
        file: String = #fileID,
        line: Int = #line,
        _ body: () -> Value
    ) throws -> Value {
        switch retryingOnInterrupt(body) {
        case .success(let value): return value
        case .failure(let errno):
            throw DeliveryError(errno: errno, operation: operation, path: describing(), file: file, line: line)
        }
    }

    // MARK: Opening

    /// Opens a folder by absolute path without following a symbolic link in its last component.
    public static func openDirectory(_ path: FilePath, file: String = #fileID, line: Int = #line) throws -> FileDescriptor {
        let raw = try path.withPlatformString { cPath in
            try check("open folder", path.string, file: file, line: line) {
                Glibc.open(cPath, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            }
        }
        return FileDescriptor(rawValue: raw)
    }

    /// `openat(2)` of one name in `directory`; `flags` gets `O_CLOEXEC` and `O_NOFOLLOW` added.
    public static func open(
        _ name: FilePath.Component,
        in directory: FileDescriptor,
        flags: CInt,
        permissions: mode_t = 0o600,
        describing: @autoclosure () -> String,
        file: String = #fileID,
        line: Int = #line
    ) throws -> FileDescriptor {
        let raw = try name.withPlatformString { cName in
            try check("open", describing(), file: file, line: line) {
                Glibc.openat(directory.rawValue, cName, flags | O_CLOEXEC | O_NOFOLLOW, permissions)
            }
        }
        return FileDescriptor(rawValue: raw)
    }

    /// `openat2(2)` of a relative path below `directory` that never follows a symbolic link nor
    /// leaves `directory`; `nil` where the kernel lacks openat2 (the caller then walks the path).
    static func openBeneath(
        _ relativePath: String,
        in directory: FileDescriptor,
        flags: CInt,
        describing: @autoclosure () -> String
    ) throws -> FileDescriptor? {
        let result = retryingOnInterrupt {
            docroute_openat2_beneath(directory.rawValue, relativePath, flags | O_CLOEXEC | O_NOFOLLOW, 0)
        }
        switch result {
        case .success(let raw): return FileDescriptor(rawValue: raw)
        case .failure(.noFunction), .failure(.notPermitted), .failure(.argListTooLong), .failure(.invalidArgument):
            // No openat2 (old kernel, seccomp filter, unknown flag): the per-component walk decides.
            return nil
        case .failure(.improperLink):
            // openat2 reports an attempt to leave `directory` as EXDEV: that took a symbolic link.
            throw DeliveryError(errno: .tooManySymbolicLinkLevels, operation: "open folder", path: describing())
        case .failure(let errno):
            throw DeliveryError(errno: errno, operation: "open folder", path: describing())
        }
    }

    /// `mkdirat(2)`; `false` when the name already exists (whatever it is).
    @discardableResult
    public static func makeDirectory(
        _ name: FilePath.Component,
        in directory: FileDescriptor,
        permissions: mode_t,
        describing: @autoclosure () -> String
    ) throws -> Bool {
        let result = name.withPlatformString { cName in
            retryingOnInterrupt { Glibc.mkdirat(directory.rawValue, cName, permissions) }
        }
        switch result {
        case .success: return true
        case .failure(.fileExists): return false
        case .failure(let errno): throw DeliveryError(errno: errno, operation: "create folder", path: describing())
        }
    }

    /// Closes a descriptor. `EINTR` from close(2) on Linux means it is closed, so it is not retried;
    /// other errors cannot be acted upon once the data was synced, so they are ignored.
    public static func close(_ descriptor: FileDescriptor) {
        _ = Glibc.close(descriptor.rawValue)
    }

    // MARK: Names

    /// `renameat2(RENAME_NOREPLACE)`: `false` when `to` exists (nothing was changed then).
    public static func renameNoReplace(
        _ from: FilePath.Component,
        in fromDirectory: FileDescriptor,
        to: FilePath.Component,
        in toDirectory: FileDescriptor,
        describing: @autoclosure () -> String
    ) throws -> Bool {
        let result = from.withPlatformString { cFrom in
            to.withPlatformString { cTo in
                retryingOnInterrupt { docroute_rename_noreplace(fromDirectory.rawValue, cFrom, toDirectory.rawValue, cTo) }
            }
        }
        switch result {
        case .success: return true
        case .failure(.fileExists): return false
        case .failure(let errno): throw DeliveryError(errno: errno, operation: "rename", path: describing())
        }
    }

    /// `renameat(2)`, replacing `to` if it exists.
    public static func rename(
        _ from: FilePath.Component,
        in fromDirectory: FileDescriptor,
        to: FilePath.Component,
        in toDirectory: FileDescriptor,
        describing: @autoclosure () -> String
    ) throws {
        _ = try from.withPlatformString { cFrom in
            try to.withPlatformString { cTo in
                try check("rename", describing()) { Glibc.renameat(fromDirectory.rawValue, cFrom, toDirectory.rawValue, cTo) }
            }
        }
    }

    /// `unlinkat(2)` of a file; `false` when it did not exist.
    @discardableResult
    public static func unlink(
        _ name: FilePath.Component,
        in directory: FileDescriptor,
        describing: @autoclosure () -> String
    ) throws -> Bool {
        let result = name.withPlatformString { cName in
            retryingOnInterrupt { Glibc.unlinkat(directory.rawValue, cName, 0) }
        }
        switch result {
        case .success: return true
        case .failure(.noSuchFileOrDirectory): return false
        case .failure(let errno): throw DeliveryError(errno: errno, operation: "remove", path: describing())
        }
    }

    // MARK: Data

    /// `pread(2)` into `buffer`; 0 at the end of the file.
    public static func read(
        _ descriptor: FileDescriptor,
        into buffer: UnsafeMutableRawBufferPointer,
        at offset: Int64,
        describing: @autoclosure () -> String
    ) throws -> Int {
        try check("read", describing()) { Glibc.pread(descriptor.rawValue, buffer.baseAddress, buffer.count, off_t(offset)) }
    }

    /// `write(2)` until every byte of `buffer` is written.
    public static func writeAll(
        _ descriptor: FileDescriptor,
        _ buffer: UnsafeRawBufferPointer,
        describing: @autoclosure () -> String
    ) throws {
        var written = 0
        while written < buffer.count {
            let count = try check("write", describing()) {
                Glibc.write(descriptor.rawValue, buffer.baseAddress! + written, buffer.count - written)
            }
            written += count
        }
    }

    /// `copy_file_range(2)` from `offset` of `source` to the position of `destination`; 0 at the end.
    public static func copyFileRange(
        from source: FileDescriptor,
        at offset: inout Int64,
        to destination: FileDescriptor,
        count: Int,
        describing: @autoclosure () -> String
    ) throws -> Int {
        try check("copy", describing()) {
            docroute_copy_file_range_at(source.rawValue, &offset, destination.rawValue, nil, count)
        }
    }

    /// `sync_file_range(SYNC_FILE_RANGE_WRITE)`: starts the write-back of `count` bytes from
    /// `offset` and returns without waiting. Only a hint (an error shows again at the `fsync` or
    /// `syncfs` that makes the data durable), so it reports nothing.
    static func startWriteback(_ descriptor: FileDescriptor, from offset: Int64, count: Int64) {
        while docroute_start_writeback(descriptor.rawValue, offset, count) == -1 && errno == EINTR {}
    }

    /// `fsync(2)`: data and metadata, including a folder's entries.
    public static func fsync(_ descriptor: FileDescriptor, describing: @autoclosure () -> String) throws {
        _ = try check("sync", describing()) { Glibc.fsync(descriptor.rawValue) }
    }

    /// `fdatasync(2)`: the data and what is needed to read it back.
    public static func dataSync(_ descriptor: FileDescriptor, describing: @autoclosure () -> String) throws {
        _ = try check("sync data of", describing()) { Glibc.fdatasync(descriptor.rawValue) }
    }

    /// `syncfs(2)`: everything dirty on the file system holding `descriptor`, in one flush.
    /// Since Linux 5.8 it reports write-back errors of any file on that file system.
    public static func syncFileSystem(_ descriptor: FileDescriptor, describing: @autoclosure () -> String) throws {
        _ = try check("sync file system of", describing()) { docroute_syncfs(descriptor.rawValue) }
    }

    // MARK: Ownership

    /// `fchmod(2)`.
    public static func changeMode(_ descriptor: FileDescriptor, _ mode: mode_t, describing: @autoclosure () -> String) throws {
        _ = try check("change mode of", describing()) { Glibc.fchmod(descriptor.rawValue, mode) }
    }

    /// `fchown(2)`.
    public static func changeOwner(
        _ descriptor: FileDescriptor,
        userID: UInt32,
        groupID: UInt32,
        describing: @autoclosure () -> String
    ) throws {
        _ = try check("change owner of", describing()) { Glibc.fchown(descriptor.rawValue, uid_t(userID), gid_t(groupID)) }
    }

    /// The effective user id of this process.
    public static var effectiveUserID: UInt32 { UInt32(Glibc.geteuid()) }
}
