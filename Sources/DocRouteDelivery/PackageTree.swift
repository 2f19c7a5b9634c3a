import Crypto
import DocRouteIntake
import DocRoutePlatform
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
package enum PackageTree {
    /// How deep and how large a package may be (`max_package_depth`, `max_package_entries`).
    struct Limits: Sendable, Hashable {
        /// Folder levels below the package's top.
        var maxDepth: Int
        /// Files, folders and anything else, counted together.
        var maxEntries: Int

        /// What copying holds to even when nothing vetted the package first: two descriptors are
        /// open per level, so depth is what must stay bounded.
        static let copyGuard = Limits(maxDepth: 4096, maxEntries: .max)
    }

    /// Why a package exceeds `limits`, or nil when it does not. Walks folders only (iteratively,
    /// without following links), and stops at the first limit passed.
    static func exceeded(_ limits: Limits, in folder: CInt, describing path: String) throws -> String? {
        var entries = 0
        var stack: [(descriptor: CInt, depth: Int)] = [(folder, 0)]
        defer { for frame in stack where frame.descriptor != folder { close(frame.descriptor) } }
        while let frame = stack.popLast() {
            defer { if frame.descriptor != folder { close(frame.descriptor) } }
            for entry in DirectoryListing.entries(of: frame.descriptor) {
                entries += 1
                if entries > limits.maxEntries {
                    return "the package holds more than \(limits.maxEntries) files and folders (max_package_entries)"
                }
                guard entry.isDirectory else { continue }
                if frame.depth + 1 > limits.maxDepth {
                    return "the package has folders more than \(limits.maxDepth) levels deep (max_package_depth)"
                }
                let child = withCName(entry.name) { openat(frame.descriptor, $0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
                if child < 0 {
                    if errno == ENOENT || errno == ENOTDIR || errno == ELOOP { continue }
                    throw DeliveryError(errno: Errno(rawValue: errno), operation: "open folder", path: path + "/" + InboxNames.display(entry.name))
                }
                stack.append((child, frame.depth + 1))
            }
        }
        return nil
    }

    /// One folder of an iterative walk: its listing, where the walk is in it, and its path.
    private struct Frame {
        var source: CInt
        var destination: CInt
        var sourcePath: String
        var destinationPath: String
        var entries: [DirectoryListing.Entry]
        var next = 0
        var depth: Int
        /// The walk opened these descriptors (the top folder's belong to the caller).
        var owned: Bool
    }

    /// Copies the tree below the open folder `source` into the open, empty folder `destination`.
    /// Regular files get `fileMode`, folders `folderMode`, both `owner` when given; every copied
    /// file and folder (`destination` included) is fsynced before this returns.
    ///
    /// The walk is iterative, so no depth of folders can overflow the stack (issue 16 item 4:
    /// a package 10,000 levels deep crashed the recursive walk); `limits` still bounds the depth.
    /// - Returns: the bytes copied.
    /// - Throws: ``DeliveryError``; what was copied so far stays for the caller to remove.
    static func copy(
        from source: CInt, describing sourcePath: String,
        to destination: CInt, describing destinationPath: String,
        owner: SandboxWriter.Owner?, fileMode: mode_t, folderMode: mode_t, accessUserID: UInt32? = nil,
        buffer: UnsafeMutableRawBufferPointer, limits: Limits = .copyGuard, logger: Logger
    ) throws -> Int64 {
        var total: Int64 = 0
        var entries = 0
        var stack = [Frame(source: source, destination: destination, sourcePath: sourcePath, destinationPath: destinationPath,
                           entries: sortedEntries(of: source), depth: 0, owned: false)]
        defer {
            for frame in stack where frame.owned {
                close(frame.source)
                close(frame.destination)
            }
        }
        while let top = stack.last {
            guard top.next < top.entries.count else {
                // The folder is complete: its owner, mode and data are settled before its parent's.
                let folder = FileDescriptor(rawValue: top.destination)
                // Mode, then docrouted's ACL entry (read and search: recovery digests the tree), then owner.
                try SystemCall.changeMode(folder, folderMode, describing: top.destinationPath)
                if let owner {
                    if let accessUserID, accessUserID != owner.userID {
                        try SystemCall.setAccessList(folder, ownerPermissions: UInt16((folderMode >> 6) & 7), userID: accessUserID, userPermissions: 5, describing: top.destinationPath)
                    }
                    try SystemCall.changeOwner(folder, userID: owner.userID, groupID: owner.groupID, describing: top.destinationPath)
                }
                try SystemCall.fsync(folder, describing: top.destinationPath)
                let finished = stack.removeLast()
                if finished.owned {
                    close(finished.source)
                    close(finished.destination)
                }
                continue
            }
            let entry = top.entries[top.next]
            stack[stack.count - 1].next += 1
            entries += 1
            if entries > limits.maxEntries {
                throw DeliveryError(code: .io, message: "\(sourcePath) holds more than \(limits.maxEntries) entries; it is not copied.")
            }
            let display = InboxNames.display(entry.name)
            let fromPath = top.sourcePath + "/" + display
            let toPath = top.destinationPath + "/" + display
            try withCName(entry.name) { name in
                var info = stat()
                _ = try SystemCall.check("inspect", fromPath) { fstatat(top.source, name, &info, AT_SYMLINK_NOFOLLOW) }
                switch info.st_mode & S_IFMT {
                case S_IFDIR:
                    guard top.depth < limits.maxDepth else {
                        throw DeliveryError(code: .io, message: "\(sourcePath) has folders more than \(limits.maxDepth) levels deep; it is not copied.")
                    }
                    _ = try SystemCall.check("create folder", toPath) { mkdirat(top.destination, name, 0o700) }
                    let childSource = try openFolder(name, in: top.source, describing: fromPath)
                    let childDestination: CInt
                    do {
                        childDestination = try openFolder(name, in: top.destination, describing: toPath)
                    } catch {
                        close(childSource)
                        throw error
                    }
                    stack.append(Frame(source: childSource, destination: childDestination, sourcePath: fromPath, destinationPath: toPath,
                                       entries: sortedEntries(of: childSource), depth: top.depth + 1, owned: true))
                case S_IFREG where info.st_nlink == 1:
                    total += try copyFile(name, from: top.source, describing: fromPath, to: top.destination, describing: toPath,
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
        return total
    }

    /// The total size and a SHA-256 (lowercase hex) over a tree: each entry's path relative to
    /// `folder`, kind, and for a file its size and bytes, in sorted order (depth first, a folder
    /// before what it holds). The same tree gives the same digest wherever it lies, so recovery
    /// can tell a placed package from anything else. Iterative, like ``copy``.
    static func digest(of folder: CInt, describing path: String) throws -> (size: Int64, sha256: String) {
        var hash = SHA256()
        var total: Int64 = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 4096)
        defer { buffer.deallocate() }
        // (descriptor, relative path, path, entries, next)
        var stack: [(descriptor: CInt, relative: String, path: String, entries: [DirectoryListing.Entry], next: Int)] =
            [(folder, "", path, sortedEntries(of: folder), 0)]
        defer { for frame in stack.dropFirst() { close(frame.descriptor) } }
        while let top = stack.last {
            guard top.next < top.entries.count else {
                let finished = stack.removeLast()
                if finished.descriptor != folder { close(finished.descriptor) }
                continue
            }
            let entry = top.entries[top.next]
            stack[stack.count - 1].next += 1
            let display = InboxNames.display(entry.name)
            let entryRelative = top.relative + "/" + display
            let entryPath = top.path + "/" + display
            try withCName(entry.name) { name in
                var info = stat()
                _ = try SystemCall.check("inspect", entryPath) { fstatat(top.descriptor, name, &info, AT_SYMLINK_NOFOLLOW) }
                switch info.st_mode & S_IFMT {
                case S_IFDIR:
                    hash.update(data: Array("D \(entryRelative)\n".utf8))
                    let child = try openFolder(name, in: top.descriptor, describing: entryPath)
                    stack.append((child, entryRelative, entryPath, sortedEntries(of: child), 0))
                case S_IFREG:
                    let file = try SystemCall.check("open", entryPath) { openat(top.descriptor, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) }
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
        return (total, SandboxWriter.hex(hash.finalize()))
    }

    /// Removes `name` in `parent` and everything below it, bottom-up, without following a link
    /// (a link, or anything else that is not a folder, is unlinked itself). Nothing there is fine.
    /// Iterative, like ``copy``.
    static func remove(_ name: [UInt8], in parent: CInt, describing path: String) throws {
        // Opens `name` in `folder` as a folder to empty, or removes it when it is not one.
        func openOrUnlink(_ name: [UInt8], in folder: CInt, describing path: String) throws -> CInt? {
            try withCName(name) { cName in
                let opened = openat(folder, cName, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                if opened >= 0 { return opened }
                switch errno {
                case ENOENT: return nil
                case ENOTDIR, ELOOP:
                    if unlinkat(folder, cName, 0) != 0 && errno != ENOENT {
                        throw DeliveryError(errno: Errno(rawValue: errno), operation: "remove", path: path)
                    }
                    return nil
                default:
                    throw DeliveryError(errno: Errno(rawValue: errno), operation: "open folder", path: path)
                }
            }
        }
        guard let top = try openOrUnlink(name, in: parent, describing: path) else { return }
        var stack: [(descriptor: CInt, parent: CInt, name: [UInt8], path: String, entries: [DirectoryListing.Entry], next: Int)] =
            [(top, parent, name, path, DirectoryListing.entries(of: top), 0)]
        defer { for frame in stack { close(frame.descriptor) } }
        while let frame = stack.last {
            guard frame.next < frame.entries.count else {
                // Emptied: close it, then remove it from its parent (still open below it).
                stack.removeLast()
                close(frame.descriptor)
                let removed = withCName(frame.name) { unlinkat(frame.parent, $0, AT_REMOVEDIR) }
                if removed != 0 && errno != ENOENT {
                    throw DeliveryError(errno: Errno(rawValue: errno), operation: "remove folder", path: frame.path)
                }
                continue
            }
            let entry = frame.entries[frame.next]
            stack[stack.count - 1].next += 1
            let entryPath = frame.path + "/" + InboxNames.display(entry.name)
            var descend = entry.isDirectory
            if !descend {
                try withCName(entry.name) { child in
                    if unlinkat(frame.descriptor, child, 0) != 0 {
                        if errno == EISDIR { descend = true; return }
                        if errno != ENOENT { throw DeliveryError(errno: Errno(rawValue: errno), operation: "remove", path: entryPath) }
                    }
                }
            }
            if descend, let child = try openOrUnlink(entry.name, in: frame.descriptor, describing: entryPath) {
                stack.append((child, frame.descriptor, entry.name, entryPath, DirectoryListing.entries(of: child), 0))
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
            throw DeliveryError(code: .changed, message: "\(sourcePath) was replaced while its package was copied. \(DeliveryError.advice(for: .changed))")
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
            throw DeliveryError(code: .changed, message: "\(sourcePath) changed while its package was copied. \(DeliveryError.advice(for: .changed))")
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
