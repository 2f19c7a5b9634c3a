import Crypto
import Logging
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Copies, hashes and removes package documents (folders delivered whole, issue #4).
///
/// Every name is opened relative to its parent folder's descriptor with `O_NOFOLLOW`, so a
/// symbolic link inside a package (or swapped in while it is copied) is never followed: links,
/// FIFOs, devices, sockets and hard-linked files inside a package are skipped and logged.
enum PackageTree {
    /// Copies the tree below the open folder `source` into the open, empty folder `destination`.
    /// Regular files get `fileMode`, folders `folderMode`, both `owner` when given; every copied
    /// file and folder (`destination` included) is fsynced before this returns.
    /// - Returns: the bytes copied.
    /// - Throws: ``DeliveryError``; what was copied so far stays for the caller to remove.
    static func copy(
        from source: CInt, describing sourcePath: String,
        to destination: CInt, describing destinationPath: String,
        owner: SandboxWriter.Owner?, fileMode: mode_t, folderMode: mode_t, accessUserID: UInt32? = nil,
        buffer: UnsafeMutableRawBufferPointer, logger: Logger
    ) throws -> Int64 {
        var total: Int64 = 0
        for entry in sortedEntries(of: source) {
            let display = InboxNames.display(entry.name)
            let fromPath = sourcePath + "/" + display
            let toPath = destinationPath + "/" + display
            try withCName(entry.name) { name in
                var info = stat()
                _ = try SystemCall.check("inspect", fromPath) { fstatat(source, name, &info, AT_SYMLINK_NOFOLLOW) }
                switch info.st_mode & S_IFMT {
                case S_IFDIR:
                    _ = try SystemCall.check("create folder", toPath) { mkdirat(destination, name, 0o700) }
                    let childSource = try openFolder(name, in: source, describing: fromPath)
                    defer { close(childSource) }
                    let childDestination = try openFolder(name, in: destination, describing: toPath)
                    defer { close(childDestination) }
                    total += try copy(from: childSource, describing: fromPath, to: childDestination, describing: toPath,
                                      owner: owner, fileMode: fileMode, folderMode: folderMode, accessUserID: accessUserID, buffer: buffer, logger: logger)
                case S_IFREG where info.st_nlink == 1:
                    total += try copyFile(name, from: source, describing: fromPath, to: destination, describing: toPath,
                                          owner: owner, mode: fileMode, accessUserID: accessUserID, buffer: buffer)
                default:
                    // Never followed: a link's target, a FIFO's writer or another name of a
                    // hard-linked file may belong to someone else.
                    logger.warning("skipped inside a package: only regular files and folders are delivered", metadata: [
                        "message-id": "package-entry-skipped", "path": "\(fromPath)",
                        "kind": "\(info.st_mode & S_IFMT == S_IFREG ? "hard-linked file" : kindName(info.st_mode))",
                    ])
                }
            }
        }
        let folder = FileDescriptor(rawValue: destination)
        // Mode, then docrouted's ACL entry (read and search: recovery digests the tree), then owner.
        try SystemCall.changeMode(folder, folderMode, describing: destinationPath)
        if let owner {
            if let accessUserID, accessUserID != owner.userID {
                try SystemCall.setAccessList(folder, ownerPermissions: UInt16((folderMode >> 6) & 7), userID: accessUserID, userPermissions: 5, describing: destinationPath)
            }
            try SystemCall.changeOwner(folder, userID: owner.userID, groupID: owner.groupID, describing: destinationPath)
        }
        try SystemCall.fsync(folder, describing: destinationPath)
        return total
    }

    /// The total size and a SHA-256 (lowercase hex) over a tree: each entry's path relative to
    /// `folder`, kind, and for a file its size and bytes, in sorted order. The same tree gives the
    /// same digest wherever it lies, so recovery can tell a placed package from anything else.
    static func digest(of folder: CInt, describing path: String) throws -> (size: Int64, sha256: String) {
        var hash = SHA256()
        var total: Int64 = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 4096)
        defer { buffer.deallocate() }
        try digest(folder, relative: "", describing: path, into: &hash, total: &total, buffer: buffer)
        return (total, SandboxWriter.hex(hash.finalize()))
    }

    private static func digest(
        _ folder: CInt, relative: String, describing path: String,
        into hash: inout SHA256, total: inout Int64, buffer: UnsafeMutableRawBufferPointer
    ) throws {
        for entry in sortedEntries(of: folder) {
            let display = InboxNames.display(entry.name)
            let entryRelative = relative + "/" + display
            let entryPath = path + "/" + display
            try withCName(entry.name) { name in
                var info = stat()
                _ = try SystemCall.check("inspect", entryPath) { fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) }
                switch info.st_mode & S_IFMT {
                case S_IFDIR:
                    hash.update(data: Array("D \(entryRelative)\n".utf8))
                    let child = try openFolder(name, in: folder, describing: entryPath)
                    defer { close(child) }
                    try digest(child, relative: entryRelative, describing: entryPath, into: &hash, total: &total, buffer: buffer)
                case S_IFREG:
                    let file = try SystemCall.check("open", entryPath) { openat(folder, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) }
                    defer { close(file) }
                    var contents = SHA256()
                    var offset: Int64 = 0
                    while true {
                        let count = try SystemCall.read(FileDescriptor(rawValue: file), into: buffer, at: offset, describing: entryPath)
                        if count == 0 { break }
                        contents.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                        offset += Int64(count)
                    }
                    total += offset
                    hash.update(data: Array("F \(entryRelative) \(offset) \(SandboxWriter.hex(contents.finalize()))\n".utf8))
                default:
                    hash.update(data: Array("O \(entryRelative) \(info.st_mode & S_IFMT)\n".utf8))
                }
            }
        }
    }

    /// Removes `name` in `parent` and everything below it, bottom-up, without following a link
    /// (a link, or anything else that is not a folder, is unlinked itself). Nothing there is fine.
    static func remove(_ name: [UInt8], in parent: CInt, describing path: String) throws {
        try withCName(name) { cName in
            let folder = openat(parent, cName, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            if folder < 0 {
                switch errno {
                case ENOENT: return
                case ENOTDIR, ELOOP:
                    if unlinkat(parent, cName, 0) != 0 && errno != ENOENT {
                        throw DeliveryError(errno: Errno(rawValue: errno), operation: "remove", path: path)
                    }
                    return
                default:
                    throw DeliveryError(errno: Errno(rawValue: errno), operation: "open folder", path: path)
                }
            }
            defer { close(folder) }
            for entry in DirectoryListing.entries(of: folder) {
                let entryPath = path + "/" + InboxNames.display(entry.name)
                if entry.isDirectory {
                    try remove(entry.name, in: folder, describing: entryPath)
                } else {
                    try withCName(entry.name) { child in
                        if unlinkat(folder, child, 0) != 0 {
                            if errno == EISDIR { return try remove(entry.name, in: folder, describing: entryPath) }
                            if errno != ENOENT { throw DeliveryError(errno: Errno(rawValue: errno), operation: "remove", path: entryPath) }
                        }
                    }
                }
            }
            if unlinkat(parent, cName, AT_REMOVEDIR) != 0 && errno != ENOENT {
                throw DeliveryError(errno: Errno(rawValue: errno), operation: "remove folder", path: path)
            }
        }
    }

    /// Opens a folder below `parent` without following a link.
    static func openFolder(_ name: UnsafePointer<CChar>, in parent: CInt, describing path: String) throws -> CInt {
        try SystemCall.check("open folder", path) { openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
    }

    static func withCName<T>(_ name: [UInt8], _ body: (UnsafePointer<CChar>) throws -> T) rethrows -> T {
        let bytes = name.map { CChar(bitPattern: $0) } + [0]
        return try bytes.withUnsafeBufferPointer { try body($0.baseAddress!) }
    }

    private static func sortedEntries(of folder: CInt) -> [DirectoryListing.Entry] {
        DirectoryListing.entries(of: folder).sorted { $0.name.lexicographicallyPrecedes($1.name) }
    }

    private static func copyFile(
        _ name: UnsafePointer<CChar>, from source: CInt, describing sourcePath: String,
        to destination: CInt, describing destinationPath: String,
        owner: SandboxWriter.Owner?, mode: mode_t, accessUserID: UInt32?, buffer: UnsafeMutableRawBufferPointer
    ) throws -> Int64 {
        let input = try SystemCall.check("open", sourcePath) { openat(source, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY) }
        defer { close(input) }
        let before = try SystemCall.status(of: FileDescriptor(rawValue: input), describing: sourcePath)
        guard before.isRegularFile else {
            throw DeliveryError(code: .changed, message: "\(sourcePath) was replaced while its package was copied. \(DeliveryError.advice(for: .changed))", path: sourcePath)
        }
        let output = try SystemCall.check("create", destinationPath) {
            openat(destination, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        }
        let outputDescriptor = FileDescriptor(rawValue: output)
        defer { close(output) }
        var offset: Int64 = 0
        while true {
            let count = try SystemCall.read(FileDescriptor(rawValue: input), into: buffer, at: offset, describing: sourcePath)
            if count == 0 { break }
            try SystemCall.writeAll(outputDescriptor, UnsafeRawBufferPointer(rebasing: buffer[0..<count]), describing: destinationPath)
            offset += Int64(count)
        }
        let after = try SystemCall.status(of: FileDescriptor(rawValue: input), describing: sourcePath)
        guard offset == before.size, after.size == before.size, after.modificationTimeNanoseconds == before.modificationTimeNanoseconds else {
            throw DeliveryError(code: .changed, message: "\(sourcePath) changed while its package was copied. \(DeliveryError.advice(for: .changed))", path: sourcePath)
        }
        try SystemCall.changeMode(outputDescriptor, mode, describing: destinationPath)
        if let owner {
            if let accessUserID, accessUserID != owner.userID {
                try SystemCall.setAccessList(outputDescriptor, ownerPermissions: UInt16((mode >> 6) & 7), userID: accessUserID, userPermissions: 4, describing: destinationPath)
            }
            try SystemCall.changeOwner(outputDescriptor, userID: owner.userID, groupID: owner.groupID, describing: destinationPath)
        }
        try SystemCall.fsync(outputDescriptor, describing: destinationPath)
        return offset
    }

    private static func kindName(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFLNK: "symbolic link"
        case S_IFIFO: "FIFO"
        case S_IFCHR, S_IFBLK: "device"
        case S_IFSOCK: "socket"
        default: "other"
        }
    }
}
