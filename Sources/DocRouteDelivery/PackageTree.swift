import Crypto
import DocRouteIntake
import DocRoutePlatform
import Logging
import SystemPackage

/// Copies, hashes and removes package documents (folders such as `Report.rtfd`, delivered whole).
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
        defer { for frame in stack where frame.descriptor != folder { FileDescriptor(rawValue: frame.descriptor).closeIgnoringErrors() } }
        while let frame = stack.popLast() {
            defer { if frame.descriptor != folder { FileDescriptor(rawValue: frame.descriptor).closeIgnoringErrors() } }
            for entry in try Self.entries(of: frame.descriptor, describing: path) {
                entries += 1
                if entries > limits.maxEntries {
                    return "the package holds more than \(limits.maxEntries) files and folders (max_package_entries)"
                }
                guard entry.isDirectory else { continue }
                if frame.depth + 1 > limits.maxDepth {
                    return "the package has folders more than \(limits.maxDepth) levels deep (max_package_depth)"
                }
                let child: FileDescriptor
                do throws(Errno) {
                    child = try FileDescriptor(rawValue: frame.descriptor).openDirectory(entry.name)
                } catch .noSuchFileOrDirectory, .notDirectory, .tooManySymbolicLinkLevels {
                    // Gone, or replaced by a file or a link since it was listed: nothing to count below it.
                    continue
                } catch {
                    throw DeliveryError(errno: error, operation: "open folder", path: path + "/" + InboxNames.display(entry.nameBytes))
                }
                stack.append((child.rawValue, frame.depth + 1))
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
        var entries: [DirectoryEntry]
        var next = 0
        var depth: Int
        /// The walk opened these descriptors (the top folder's belong to the caller).
        var owned: Bool
    }

    /// Copies the tree below the open folder `source` into the open, empty folder `destination`.
    /// Regular files get `fileMode`, folders `folderMode`, both `owner` when given; every copied
    /// file and folder (`destination` included) is fsynced before this returns.
    ///
    /// The walk is iterative, so no depth of folders can overflow the stack (as one did:
    /// a package 10,000 levels deep crashed the recursive walk); `limits` still bounds the depth.
    /// - Returns: the bytes copied.
    /// - Throws: ``DeliveryError``; what was copied so far stays for the caller to remove.
    static func copy(
        from source: CInt, describing sourcePath: String,
        to destination: CInt, describing destinationPath: String,
        owner: SandboxWriter.Owner?, fileMode: CModeT, folderMode: CModeT, accessUserID: UInt32? = nil,
        buffer: UnsafeMutableRawBufferPointer, limits: Limits = .copyGuard, logger: Logger
    ) throws -> Int64 {
        var total: Int64 = 0
        var entries = 0
        var stack = [Frame(source: source, destination: destination, sourcePath: sourcePath, destinationPath: destinationPath,
                           entries: try sortedEntries(of: source, describing: sourcePath), depth: 0, owned: false)]
        defer {
            for frame in stack where frame.owned {
                FileDescriptor(rawValue: frame.source).closeIgnoringErrors()
                FileDescriptor(rawValue: frame.destination).closeIgnoringErrors()
            }
        }
        while let top = stack.last {
            guard top.next < top.entries.count else {
                // The folder is complete: its owner, mode and data are settled before its parent's.
                let folder = FileDescriptor(rawValue: top.destination)
                // Mode, then docrouted's ACL entry (read and search: recovery digests the tree), then owner.
                try DeliveryError.performing("change mode of", top.destinationPath) { try folder.changeMode(folderMode) }
                if let owner {
                    if let accessUserID, accessUserID != owner.userID {
                        try DeliveryError.settingAccessList(top.destinationPath) { try folder.setAccessList(ownerPermissions: UInt16((folderMode >> 6) & 7), userID: accessUserID, userPermissions: 5) }
                    }
                    try DeliveryError.performing("change owner of", top.destinationPath) { try folder.changeOwner(userID: owner.userID, groupID: owner.groupID) }
                }
                try DeliveryError.performing("sync", top.destinationPath) { try folder.sync() }
                let finished = stack.removeLast()
                if finished.owned {
                    FileDescriptor(rawValue: finished.source).closeIgnoringErrors()
                    FileDescriptor(rawValue: finished.destination).closeIgnoringErrors()
                }
                continue
            }
            let entry = top.entries[top.next]
            stack[stack.count - 1].next += 1
            entries += 1
            if entries > limits.maxEntries {
                throw DeliveryError(code: .io, message: "\(sourcePath) holds more than \(limits.maxEntries) entries; it is not copied.")
            }
            let display = InboxNames.display(entry.nameBytes)
            let fromPath = top.sourcePath + "/" + display
            let toPath = top.destinationPath + "/" + display
            do {
                let name = entry.name
                let info = try status(of: name, in: top.source, describing: fromPath)
                switch info.fileType {
                case .directory:
                    guard top.depth < limits.maxDepth else {
                        throw DeliveryError(code: .io, message: "\(sourcePath) has folders more than \(limits.maxDepth) levels deep; it is not copied.")
                    }
                    let created = try DeliveryError.performing("create folder", toPath) {
                        try FileDescriptor(rawValue: top.destination).makeDirectory(name, permissions: 0o700)
                    }
                    // The destination was empty and names are unique: one there now is not ours.
                    guard created else { throw DeliveryError(errno: .fileExists, operation: "create folder", path: toPath) }
                    let childSource = try openFolder(name, in: top.source, describing: fromPath)
                    let childEntries = try Self.entries(ofOpened: childSource, describing: fromPath, sorted: true)
                    let childDestination: CInt
                    do {
                        childDestination = try openFolder(name, in: top.destination, describing: toPath)
                    } catch {
                        FileDescriptor(rawValue: childSource).closeIgnoringErrors()
                        throw error
                    }
                    stack.append(Frame(source: childSource, destination: childDestination, sourcePath: fromPath, destinationPath: toPath,
                                       entries: childEntries, depth: top.depth + 1, owned: true))
                case .regular where info.linkCount == 1:
                    total += try copyFile(name, from: top.source, describing: fromPath, to: top.destination, describing: toPath,
                                          owner: owner, mode: fileMode, accessUserID: accessUserID, buffer: buffer)
                default:
                    // Never followed: a link's target, a FIFO's writer or another name of a
                    // hard-linked file may belong to someone else.
                    logger.warning("skipped inside a package: only regular files and folders are delivered", metadata: [
                        "message-id": "package-entry-skipped", "path": "\(fromPath)",
                        "kind": "\(info.isRegularFile ? "hard-linked file" : kindName(info.fileType))",
                    ])
                }
            }
        }
        return total
    }

    /// A tree's files add up to more than the size it was expected to have.
    struct LargerThanExpected: Error, CustomStringConvertible {
        /// The file that passed the size.
        var path: String
        var description: String { "\(path) makes the tree larger than expected" }
    }

    /// The total size and a SHA-256 (lowercase hex) over a tree: each entry's path relative to
    /// `folder`, kind, and for a file its size and bytes, in sorted order (depth first, a folder
    /// before what it holds). The same tree gives the same digest wherever it lies, so recovery
    /// can tell a placed package from anything else. Iterative, like ``copy``.
    /// - Throws: ``DocumentDigest/OverTime`` once `deadline` has passed (``LedgerRebuild`` bounds
    ///   the time a package in a sandbox may take, as a file's); ``LargerThanExpected`` as soon as
    ///   its files add up to more than `sizeLimit` bytes (recovery knows the size the tree it
    ///   looks for had: a tree its handler added a huge, even sparse, file to is not it, and is
    ///   not read to its end to find that out).
    static func digest(of folder: CInt, describing path: String, deadline: ContinuousClock.Instant? = nil,
                       sizeLimit: Int64? = nil) throws -> (size: Int64, sha256: String) {
        var hash = SHA256()
        var total: Int64 = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 4096)
        defer { buffer.deallocate() }
        // (descriptor, relative path, path, entries, next)
        var stack: [(descriptor: CInt, relative: String, path: String, entries: [DirectoryEntry], next: Int)] =
            [(folder, "", path, try sortedEntries(of: folder, describing: path), 0)]
        defer { for frame in stack.dropFirst() { FileDescriptor(rawValue: frame.descriptor).closeIgnoringErrors() } }
        while let top = stack.last {
            guard top.next < top.entries.count else {
                let finished = stack.removeLast()
                if finished.descriptor != folder { FileDescriptor(rawValue: finished.descriptor).closeIgnoringErrors() }
                continue
            }
            let entry = top.entries[top.next]
            stack[stack.count - 1].next += 1
            let display = InboxNames.display(entry.nameBytes)
            let entryRelative = top.relative + "/" + display
            let entryPath = top.path + "/" + display
            do {
                let name = entry.name
                let info = try status(of: name, in: top.descriptor, describing: entryPath)
                switch info.fileType {
                case .directory:
                    hash.update(data: Array("D \(entryRelative)\n".utf8))
                    let child = try openFolder(name, in: top.descriptor, describing: entryPath)
                    let childEntries = try entries(ofOpened: child, describing: entryPath, sorted: true)
                    stack.append((child, entryRelative, entryPath, childEntries, 0))
                case .regular:
                    if let sizeLimit, total + info.size > sizeLimit { throw LargerThanExpected(path: entryPath) }
                    let file = try DeliveryError.performing("open", entryPath) {
                        try FileDescriptor(rawValue: top.descriptor).open(name, .readOnly, options: [.nonBlocking]).rawValue
                    }
                    defer { FileDescriptor(rawValue: file).closeIgnoringErrors() }
                    var contents = SHA256()
                    var offset: Int64 = 0
                    while true {
                        if let deadline, ContinuousClock.now >= deadline { throw DocumentDigest.OverTime(path: entryPath) }
                        if let sizeLimit, total + offset > sizeLimit { throw LargerThanExpected(path: entryPath) }
                        let count = try DeliveryError.performing("read", entryPath) { try FileDescriptor(rawValue: file).read(into: buffer, atOffset: offset) }
                        if count == 0 { break }
                        contents.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                        offset += Int64(count)
                    }
                    total += offset
                    hash.update(data: Array("F \(entryRelative) \(offset) \(SandboxWriter.hex(contents.finalize()))\n".utf8))
                default:
                    hash.update(data: Array("O \(entryRelative) \(info.fileType.rawValue)\n".utf8))
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
        func openOrUnlink(_ name: FilePath.Component, in folder: CInt, describing path: String) throws -> CInt? {
            let folder = FileDescriptor(rawValue: folder)
            do throws(Errno) {
                return try folder.openDirectory(name).rawValue
            } catch .noSuchFileOrDirectory {
                return nil
            } catch .notDirectory, .tooManySymbolicLinkLevels {
                try DeliveryError.performing("remove", path) { try folder.unlink(name) }
                return nil
            } catch {
                throw DeliveryError(errno: error, operation: "open folder", path: path)
            }
        }
        guard let component = component(name) else {
            throw DeliveryError(code: .invalidName, message: "\(path): not a name of one file. \(DeliveryError.advice(for: .invalidName))")
        }
        guard let top = try openOrUnlink(component, in: parent, describing: path) else { return }
        var stack: [(descriptor: CInt, parent: CInt, name: FilePath.Component, path: String, entries: [DirectoryEntry], next: Int)] =
            [(top, parent, component, path, try entries(ofOpened: top, describing: path, sorted: false), 0)]
        defer { for frame in stack { FileDescriptor(rawValue: frame.descriptor).closeIgnoringErrors() } }
        while let frame = stack.last {
            guard frame.next < frame.entries.count else {
                // Emptied: close it, then remove it from its parent (still open below it).
                stack.removeLast()
                FileDescriptor(rawValue: frame.descriptor).closeIgnoringErrors()
                try DeliveryError.performing("remove folder", frame.path) { try FileDescriptor(rawValue: frame.parent).removeDirectory(frame.name) }
                continue
            }
            let entry = frame.entries[frame.next]
            stack[stack.count - 1].next += 1
            let entryPath = frame.path + "/" + InboxNames.display(entry.nameBytes)
            var descend = entry.isDirectory
            if !descend {
                do throws(Errno) {
                    try FileDescriptor(rawValue: frame.descriptor).unlink(entry.name)
                } catch .isDirectory {
                    // It became a folder since it was listed.
                    descend = true
                } catch {
                    throw DeliveryError(errno: error, operation: "remove", path: entryPath)
                }
            }
            if descend, let child = try openOrUnlink(entry.name, in: frame.descriptor, describing: entryPath) {
                let childEntries = try entries(ofOpened: child, describing: entryPath, sorted: false)
                stack.append((child, frame.descriptor, entry.name, entryPath, childEntries, 0))
            }
        }
    }

    /// Opens a folder below `parent` without following a link.
    static func openFolder(_ name: FilePath.Component, in parent: CInt, describing path: String) throws -> CInt {
        try DeliveryError.performing("open folder", path) { try FileDescriptor(rawValue: parent).openDirectory(name).rawValue }
    }

    /// `fstatat` of `name` in `folder` without following a link; a name that is gone is `vanished`.
    private static func status(of name: FilePath.Component, in folder: CInt, describing path: String) throws -> FileStatus {
        let found = try DeliveryError.performing("inspect", path) { try FileDescriptor(rawValue: folder).status(of: name) }
        guard let found else { throw DeliveryError(errno: .noSuchFileOrDirectory, operation: "inspect", path: path) }
        return found
    }

    /// The name of one file from its raw bytes; nil for an empty name or one with a `/` or a NUL.
    static func component(_ name: [UInt8]) -> FilePath.Component? {
        FilePath.Component(platformBytes: name)
    }

    /// The entries of an open folder; a folder that cannot be read throws rather than look empty.
    static func entries(of folder: CInt, describing path: String) throws -> [DirectoryEntry] {
        try DeliveryError.performing("list folder", path) { try FileDescriptor(rawValue: folder).directoryEntries() }
    }

    /// The entries of `folder`, a descriptor the walk has just opened and no frame holds yet: when
    /// it cannot be listed it is closed before the error is thrown, so nothing is left open.
    private static func entries(ofOpened folder: CInt, describing path: String, sorted: Bool) throws -> [DirectoryEntry] {
        do {
            return try sorted ? sortedEntries(of: folder, describing: path) : entries(of: folder, describing: path)
        } catch {
            FileDescriptor(rawValue: folder).closeIgnoringErrors()
            throw error
        }
    }

    private static func sortedEntries(of folder: CInt, describing path: String) throws -> [DirectoryEntry] {
        try entries(of: folder, describing: path)
            .map { (entry: $0, bytes: $0.nameBytes) }
            .sorted { $0.bytes.lexicographicallyPrecedes($1.bytes) }
            .map(\.entry)
    }

    private static func copyFile(
        _ name: FilePath.Component, from source: CInt, describing sourcePath: String,
        to destination: CInt, describing destinationPath: String,
        owner: SandboxWriter.Owner?, mode: CModeT, accessUserID: UInt32?, buffer: UnsafeMutableRawBufferPointer
    ) throws -> Int64 {
        let input = try DeliveryError.performing("open", sourcePath) {
            try FileDescriptor(rawValue: source).open(name, .readOnly, options: [.nonBlocking, .noControllingTerminal]).rawValue
        }
        defer { FileDescriptor(rawValue: input).closeIgnoringErrors() }
        let before = try DeliveryError.performing("inspect", sourcePath) { try FileDescriptor(rawValue: input).status() }
        guard before.isRegularFile else {
            throw DeliveryError(code: .changed, message: "\(sourcePath) was replaced while its package was copied. \(DeliveryError.advice(for: .changed))")
        }
        let output = try DeliveryError.performing("create", destinationPath) {
            try FileDescriptor(rawValue: destination).open(name, .writeOnly, options: [.create, .exclusiveCreate], permissions: 0o600).rawValue
        }
        let outputDescriptor = FileDescriptor(rawValue: output)
        defer { FileDescriptor(rawValue: output).closeIgnoringErrors() }
        var offset: Int64 = 0
        if SandboxWriter.copiesKeepingHoles(before) {
            // A sparse file in a package stays sparse, as a document on its own does.
            var noHash: SHA256? = nil
            try SandboxWriter.copyKeepingHoles(from: FileDescriptor(rawValue: input), size: before.size, describing: sourcePath,
                                               to: outputDescriptor, describing: destinationPath, buffer: buffer, hash: &noHash)
            offset = before.size
        } else {
            while true {
                let count = try DeliveryError.performing("read", sourcePath) { try FileDescriptor(rawValue: input).read(into: buffer, atOffset: offset) }
                if count == 0 { break }
                try DeliveryError.performing("write", destinationPath) { try outputDescriptor.writeAll(from: UnsafeRawBufferPointer(rebasing: buffer[0..<count])) }
                offset += Int64(count)
            }
        }
        let after = try DeliveryError.performing("inspect", sourcePath) { try FileDescriptor(rawValue: input).status() }
        guard offset == before.size, after.size == before.size, after.modificationTimeNanoseconds == before.modificationTimeNanoseconds else {
            throw DeliveryError(code: .changed, message: "\(sourcePath) changed while its package was copied. \(DeliveryError.advice(for: .changed))")
        }
        try DeliveryError.performing("change mode of", destinationPath) { try outputDescriptor.changeMode(mode) }
        if let owner {
            if let accessUserID, accessUserID != owner.userID {
                try DeliveryError.settingAccessList(destinationPath) { try outputDescriptor.setAccessList(ownerPermissions: UInt16((mode >> 6) & 7), userID: accessUserID, userPermissions: 4) }
            }
            try DeliveryError.performing("change owner of", destinationPath) { try outputDescriptor.changeOwner(userID: owner.userID, groupID: owner.groupID) }
        }
        try DeliveryError.performing("sync", destinationPath) { try outputDescriptor.sync() }
        return offset
    }

    private static func kindName(_ type: FileType) -> String {
        switch type {
        case .symbolicLink: "symbolic link"
        case .fifo: "FIFO"
        case .characterSpecial, .blockSpecial: "device"
        case .socket: "socket"
        default: "other"
        }
    }
}
