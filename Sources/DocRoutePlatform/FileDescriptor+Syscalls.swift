import CDocRouteShim
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// The platform layer: every system call of the daemon on files and folders, as methods of the
// descriptor it acts on. Each is retried on `EINTR` and throws the `Errno` it failed with, nothing
// else: what an error means (and what a user should do about it) is for the caller's domain to say.
//
// Every call that names a file takes a folder descriptor and one name in it (the `*at` calls), and
// adds `O_NOFOLLOW`, so a path is never resolved twice and no symbolic link is followed by accident.
//
// Opening, reading, writing, copying, syncing, renaming and unlinking go through `FaultPoint.call`,
// which fails the call a `DOCROUTE_FAULT` rule names (tests only; otherwise one untaken branch).

extension FileDescriptor {
    // MARK: Opening

    /// Opens a folder by absolute path without following a symbolic link in its last component.
    package static func openDirectory(atPath path: FilePath) throws(Errno) -> FileDescriptor {
        let raw = try path.withPlatformString { cPath in
            Errno.result { FaultPoint.call(.open) { Glibc.open(cPath, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) } }
        }.get()
        return FileDescriptor(rawValue: raw)
    }

    /// An anonymous file in memory (`memfd_create(2)`, close-on-exec): in no folder, so creating
    /// it allocates no inode on a disk, and gone with its last descriptor. `name` shows only in
    /// /proc. Counted as an open by `FaultPoint`.
    package static func memoryFile(named name: String) throws(Errno) -> FileDescriptor {
        let raw = try name.withCString { cName in
            Errno.result { FaultPoint.call(.open) { docroute_memfd_create(cName) } }
        }.get()
        return FileDescriptor(rawValue: raw)
    }

    /// `open(2)` of a path (for files docrouted's own configuration names, such as the ledger);
    /// `flags` gets `O_CLOEXEC` and `O_NOFOLLOW` added, so a symbolic link as the last component
    /// fails with `ELOOP` (the folders on the way are the administrator's to link).
    package static func open(atPath path: FilePath, flags: CInt, permissions: mode_t = 0o600) throws(Errno) -> FileDescriptor {
        let raw = try path.withPlatformString { cPath in
            Errno.result { FaultPoint.call(.open) { Glibc.open(cPath, flags | O_CLOEXEC | O_NOFOLLOW, permissions) } }
        }.get()
        return FileDescriptor(rawValue: raw)
    }

    /// `openat(2)` of one name in this folder; `flags` gets `O_CLOEXEC` and `O_NOFOLLOW` added, so
    /// a symbolic link there fails with `ELOOP`.
    package func open(_ name: FilePath.Component, flags: CInt, permissions: mode_t = 0o600) throws(Errno) -> FileDescriptor {
        let raw = try name.withPlatformString { cName in
            Errno.result { FaultPoint.call(.open) { Glibc.openat(self.rawValue, cName, flags | O_CLOEXEC | O_NOFOLLOW, permissions) } }
        }.get()
        return FileDescriptor(rawValue: raw)
    }

    /// `openat(2)` of a folder in this folder, never through a symbolic link.
    package func openDirectory(_ name: FilePath.Component) throws(Errno) -> FileDescriptor {
        try open(name, flags: O_RDONLY | O_DIRECTORY)
    }

    /// `openat2(2)` of a relative path below this folder that never follows a symbolic link nor
    /// leaves the folder; `nil` where the kernel lacks openat2 (the caller then walks the path one
    /// name at a time). A symbolic link on the way, or a `..` that would leave, throws `ELOOP`.
    package func openBeneath(_ relativePath: String, flags: CInt) throws(Errno) -> FileDescriptor? {
        let result = Errno.result {
            FaultPoint.call(.open) { docroute_openat2_beneath(self.rawValue, relativePath, flags | O_CLOEXEC | O_NOFOLLOW, 0) }
        }
        switch result {
        case .success(let raw): return FileDescriptor(rawValue: raw)
        case .failure(.noFunction), .failure(.notPermitted), .failure(.argListTooLong), .failure(.invalidArgument):
            // No openat2 (old kernel, seccomp filter, unknown flag): the per-component walk decides.
            return nil
        case .failure(.improperLink):
            // openat2 reports an attempt to leave the folder as EXDEV: that took a symbolic link.
            throw .tooManySymbolicLinkLevels
        case .failure(let errno):
            throw errno
        }
    }

    /// Closes the descriptor. `EINTR` from close(2) on Linux means it is closed, so it is not
    /// retried; other errors cannot be acted upon once the data was synced, so they are ignored.
    package func closeIgnoringErrors() {
        _ = Glibc.close(rawValue)
    }

    /// `fcntl(F_GETFL)`: the access mode and status flags (`O_NONBLOCK`, `O_PATH`...) of the open file.
    package func statusFlags() throws(Errno) -> CInt {
        try Errno.retryingOnInterrupt { Glibc.fcntl(self.rawValue, F_GETFL) }
    }

    /// Sets `O_NONBLOCK` on the open file (a listening socket that is accepted from only once it
    /// is ready, so that a connection gone meanwhile never blocks the accepting task).
    package func setNonBlocking() throws(Errno) {
        let flags = try statusFlags()
        guard flags & O_NONBLOCK == 0 else { return }
        _ = try Errno.retryingOnInterrupt { Glibc.fcntl(self.rawValue, F_SETFL, flags | O_NONBLOCK) }
    }

    // MARK: Names

    /// `mkdirat(2)`; `false` when the name already exists (whatever it is).
    @discardableResult
    package func makeDirectory(_ name: FilePath.Component, permissions: mode_t) throws(Errno) -> Bool {
        let result = name.withPlatformString { cName in
            Errno.result { Glibc.mkdirat(self.rawValue, cName, permissions) }
        }
        switch result {
        case .success: return true
        case .failure(.fileExists): return false
        case .failure(let errno): throw errno
        }
    }

    /// `renameat2(RENAME_NOREPLACE)` of `name` in this folder to `newName` in `folder`: `false`
    /// when `newName` exists (nothing was changed then).
    package func renameNoReplace(_ name: FilePath.Component, to newName: FilePath.Component, in folder: FileDescriptor) throws(Errno) -> Bool {
        let result = name.withPlatformString { cFrom in
            newName.withPlatformString { cTo in
                Errno.result { FaultPoint.call(.rename) { docroute_rename_noreplace(self.rawValue, cFrom, folder.rawValue, cTo) } }
            }
        }
        switch result {
        case .success: return true
        case .failure(.fileExists): return false
        case .failure(let errno): throw errno
        }
    }

    /// `renameat(2)` of `name` in this folder to `newName` in `folder`, replacing `newName` if it exists.
    package func rename(_ name: FilePath.Component, to newName: FilePath.Component, in folder: FileDescriptor) throws(Errno) {
        _ = try name.withPlatformString { cFrom in
            newName.withPlatformString { cTo in
                Errno.result { FaultPoint.call(.rename) { Glibc.renameat(self.rawValue, cFrom, folder.rawValue, cTo) } }
            }
        }.get()
    }

    /// `unlinkat(2)` of a file in this folder; `false` when it did not exist.
    @discardableResult
    package func unlink(_ name: FilePath.Component) throws(Errno) -> Bool {
        try remove(name, flags: 0)
    }

    /// `unlinkat(2)` with `AT_REMOVEDIR` of an empty folder in this folder; `false` when it did not exist.
    @discardableResult
    package func removeDirectory(_ name: FilePath.Component) throws(Errno) -> Bool {
        try remove(name, flags: AT_REMOVEDIR)
    }

    private func remove(_ name: FilePath.Component, flags: CInt) throws(Errno) -> Bool {
        let result = name.withPlatformString { cName in
            Errno.result { FaultPoint.call(.unlink) { Glibc.unlinkat(self.rawValue, cName, flags) } }
        }
        switch result {
        case .success: return true
        case .failure(.noSuchFileOrDirectory): return false
        case .failure(let errno): throw errno
        }
    }

    // MARK: Data

    /// `pread(2)` into `buffer` from `offset`; 0 at the end of the file.
    package func read(into buffer: UnsafeMutableRawBufferPointer, atOffset offset: Int64) throws(Errno) -> Int {
        try Errno.retryingOnInterrupt { FaultPoint.call(.read) { Glibc.pread(self.rawValue, buffer.baseAddress, buffer.count, off_t(offset)) } }
    }

    /// `write(2)` until every byte of `buffer` is written.
    package func writeAll(from buffer: UnsafeRawBufferPointer) throws(Errno) {
        guard let base = buffer.baseAddress else { return }
        var written = 0
        while written < buffer.count {
            written += try Errno.retryingOnInterrupt { FaultPoint.call(.write) { Glibc.write(self.rawValue, base + written, buffer.count - written) } }
        }
    }

    /// `pwrite(2)` until every byte of `buffer` is written at `offset` (the file position is left
    /// alone).
    package func writeAll(from buffer: UnsafeRawBufferPointer, atOffset offset: Int64) throws(Errno) {
        guard let base = buffer.baseAddress else { return }
        var written = 0
        while written < buffer.count {
            written += try Errno.retryingOnInterrupt {
                FaultPoint.call(.write) { Glibc.pwrite(self.rawValue, base + written, buffer.count - written, off_t(offset) + off_t(written)) }
            }
        }
    }

    /// `lseek(SEEK_DATA)`: where the next range holding data starts, at or after `offset`; nil when
    /// only a hole is left before the end. A file system that does not track holes reports the
    /// whole file as data.
    package func nextData(from offset: Int64) throws(Errno) -> Int64? {
        switch Errno.result(retryingOnInterrupt: { docroute_seek_data(self.rawValue, offset) }) {
        case .success(let start): return start
        case .failure(.noSuchAddressOrDevice): return nil
        case .failure(let errno): throw errno
        }
    }

    /// `lseek(SEEK_HOLE)`: where the next hole starts, at or after `offset` (the end of the file is
    /// one); nil at or past the end.
    package func nextHole(from offset: Int64) throws(Errno) -> Int64? {
        switch Errno.result(retryingOnInterrupt: { docroute_seek_hole(self.rawValue, offset) }) {
        case .success(let start): return start
        case .failure(.noSuchAddressOrDevice): return nil
        case .failure(let errno): throw errno
        }
    }

    /// `copy_file_range(2)` from `offset` of this file (advanced by what was copied) to the
    /// position of `destination`; 0 at the end.
    package func copyFileRange(from offset: inout Int64, to destination: FileDescriptor, count: Int) throws(Errno) -> Int {
        try Errno.retryingOnInterrupt { FaultPoint.call(.copy) { docroute_copy_file_range_at(self.rawValue, &offset, destination.rawValue, nil, count) } }
    }

    /// `ftruncate(2)`: cuts the file to `size` bytes (or extends it with zeros).
    package func truncate(to size: Int64) throws(Errno) {
        _ = try Errno.retryingOnInterrupt { Glibc.ftruncate(self.rawValue, off_t(size)) }
    }

    /// `fsync(2)`: data and metadata, including a folder's entries.
    package func sync() throws(Errno) {
        _ = try Errno.retryingOnInterrupt { FaultPoint.call(.sync) { Glibc.fsync(self.rawValue) } }
    }

    /// `sync_file_range(SYNC_FILE_RANGE_WRITE)`: starts the write-back of `count` bytes from
    /// `offset` and returns without waiting. Only a hint (an error shows again at the `fsync` or
    /// `syncfs` that makes the data durable), so it reports nothing.
    package func startWriteback(from offset: Int64, count: Int64) {
        _ = try? Errno.retryingOnInterrupt { docroute_start_writeback(self.rawValue, offset, count) }
    }

    /// Reads `count` bytes from `offset` through a read-only shared mapping with every page read
    /// in before `body` sees them (`mmap(2)`, `MADV_POPULATE_READ`): the bytes are hashed straight
    /// from the page cache, without `pread`'s copy into a buffer. A read error throws here (`EIO`,
    /// `EFAULT` past the end of the file), `EINVAL` where the kernel is older than 5.14.
    ///
    /// Only for a file nobody else can truncate while `body` runs (docrouted's own copy, mode 0600,
    /// not yet handed over): touching a mapped page past a new end of the file raises `SIGBUS`.
    package func withPopulatedMapping<Value>(
        offset: Int64, count: Int, _ body: (UnsafeRawBufferPointer) -> Value
    ) throws(Errno) -> Value {
        let pageMask = Int64(Self.pageSize - 1)
        let start = offset & ~pageMask
        let length = Int(offset - start) + count
        guard count > 0 else { return body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        // The shim retries the populating `madvise` on EINTR; `mmap` itself is not interrupted.
        guard let address = docroute_map_read_populated(rawValue, start, length) else {
            throw Errno(rawValue: Glibc.errno)
        }
        defer { _ = docroute_unmap(address, length) }
        return body(UnsafeRawBufferPointer(start: address + Int(offset - start), count: count))
    }

    /// The size of a memory page, which a mapping's offset must be a multiple of.
    package static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// `fdatasync(2)`: the data and what is needed to read it back.
    package func syncData() throws(Errno) {
        _ = try Errno.retryingOnInterrupt { FaultPoint.call(.sync) { Glibc.fdatasync(self.rawValue) } }
    }

    /// `syncfs(2)`: everything dirty on the file system holding this descriptor, in one flush.
    /// Since Linux 5.8 it reports write-back errors of any file on that file system.
    package func syncFileSystem() throws(Errno) {
        _ = try Errno.retryingOnInterrupt { FaultPoint.call(.sync) { docroute_syncfs(self.rawValue) } }
    }

    // MARK: Ownership

    /// `fchmod(2)`.
    package func changeMode(_ mode: mode_t) throws(Errno) {
        _ = try Errno.retryingOnInterrupt { Glibc.fchmod(self.rawValue, mode) }
    }

    /// `fchown(2)`.
    package func changeOwner(userID: UInt32, groupID: UInt32) throws(Errno) {
        _ = try Errno.retryingOnInterrupt { Glibc.fchown(self.rawValue, uid_t(userID), gid_t(groupID)) }
    }
}
