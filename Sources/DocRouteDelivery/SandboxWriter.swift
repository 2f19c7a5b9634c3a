import Crypto
import DocRouteHandlers
import DocRouteIntake
import DocRoutePlatform
import SystemPackage

/// Writes files into folders that someone else controls (a handler's sandbox, the quarantine),
/// without ever following a symbolic link there or writing outside them.
///
/// Folders are opened from a descriptor of their root, one component at a time with
/// `O_NOFOLLOW | O_DIRECTORY` (or in one `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`), and
/// every later operation is relative to the folder's descriptor. A handler that replaces a folder
/// of its sandbox with a symbolic link gets a ``DeliveryErrorCode/symbolicLink`` error.
package struct SandboxWriter: Sendable {
    /// Who should own delivered files and created folders.
    package struct Owner: Sendable, Hashable {
        /// The owner's uid.
        package var userID: UInt32
        /// The owner's gid.
        package var groupID: UInt32
    }

    /// How bytes get from the source to the temporary copy.
    package enum CopyMethod: Sendable, Hashable {
        /// `pread`/`write` through one buffer, hashing the bytes on the way: fastest for small
        /// files (one read, one write, no second pass).
        case readWrite
        /// `copy_file_range` in the kernel (a reflink where the file system can), then the copy is
        /// read back from the page cache to hash it (from 16 MiB on, the copy is hashed by a
        /// second thread from its own pages while the kernel copies: ``CopyHashFollower``); falls back to
        /// `readWrite` where the kernel refuses. Fastest for large files.
        case copyFileRange
        /// `readWrite` below `threshold` bytes, `copyFileRange` from there on. The default, with
        /// 1 MiB (see the measurements in the project's notes).
        case automatic(threshold: Int64)

        /// ``automatic(threshold:)`` at 1 MiB.
        package static let `default` = CopyMethod.automatic(threshold: 1 << 20)

        func usesKernelCopy(size: Int64) -> Bool {
            switch self {
            case .readWrite: false
            case .copyFileRange: true
            case .automatic(let threshold): size >= threshold
            }
        }
    }

    /// An open folder to write into.
    package struct Folder: Sendable {
        /// The folder's descriptor; every name below is relative to it.
        package let descriptor: FileDescriptor
        /// The folder's path, for the ledger and for messages.
        package let path: FilePath
        /// The folder's device and inode.
        package let status: FileStatus
        /// The root it was opened from, kept open so that ``SandboxWriter/confirmInPlace(_:)`` can
        /// look the folder up again from there; nil when the folder is the root itself.
        let root: FileDescriptor?
        /// The folder's path below `root`.
        let relativePath: String

        init(descriptor: FileDescriptor, path: FilePath, status: FileStatus, root: FileDescriptor? = nil, relativePath: String = "") {
            self.descriptor = descriptor
            self.path = path
            self.status = status
            self.root = root
            self.relativePath = relativePath
        }

        /// The path of a name in this folder.
        package func path(of name: String) -> FilePath { path.appending(name) }

        /// Closes the folder's descriptor (and its root's).
        package func close() {
            descriptor.closeIgnoringErrors()
            if let root { root.closeIgnoringErrors() }
        }
    }

    /// A synced-later copy under a temporary name in a folder.
    package struct TemporaryFile: Sendable, Hashable {
        /// `.docroute-<random>.tmp`.
        package var name: String
        /// Bytes copied.
        package var size: Int64
        /// SHA-256 of the bytes, lowercase hex.
        package var sha256: String
        /// The copy's device and inode (a rename keeps them).
        package var device: UInt64
        /// The copy's inode.
        package var inode: UInt64
        /// Already durable, data and metadata (a large copy is synced by itself, see
        /// ``SandboxWriter/syncsByItself(size:)``): the batch's `syncfs` need not wait for it.
        var isSynced = false
    }

    /// Names of temporaries start with this and end with ``temporarySuffix``; a sanitised final
    /// name never starts with a dot, so the two can never be confused.
    package static let temporaryPrefix = SandboxName.temporaryPrefix
    /// See ``temporaryPrefix``.
    package static let temporarySuffix = SandboxName.temporarySuffix

    /// Mode of created folders: a handler's sandbox is its own (the admin group, which
    /// holds the mail delivery agent, once read and planted documents through group bits).
    package var folderMode: CModeT = 0o700
    /// Mode of delivered files.
    package var fileMode: CModeT = 0o600
    /// The uid a POSIX ACL entry is given on what is handed to another owner (rwx on folders, read
    /// on files): docrouted's own when it is not root, which has no other way back into a 0700
    /// folder it gave away (it runs without CAP_DAC_OVERRIDE). Nil when docrouted is root.
    package var accessUserID: UInt32?
    /// How to copy.
    package var copyMethod: CopyMethod

    /// Creates a writer.
    package init(copyMethod: CopyMethod = .default) {
        self.copyMethod = copyMethod
    }

    /// Whether a name is one of our temporaries.
    package static func isTemporaryName(_ name: String) -> Bool {
        SandboxName.isTemporaryName(name)
    }

    // MARK: Folders

    /// Opens `root/components[0]/components[1]/…`, creating what is missing when `create` is true
    /// (owned by `owner` when one is given; the caller gives one only when it may chown).
    ///
    /// `root` itself must exist and may not be a symbolic link; no component below it may be one.
    /// - Throws: ``DeliveryError`` (`symbolicLink`, `notDirectory`, `vanished` when `create` is
    ///   false and a folder is missing, `permissionDenied`, …).
    package func openFolder(root: FilePath, components: [String], owner: Owner?, create: Bool) throws -> Folder {
        let rootDescriptor = try DeliveryError.performing("open folder", root.string) { try FileDescriptor.openDirectory(atPath: root) }
        var current = rootDescriptor
        var currentPath = root
        do {
            var componentNames: [FilePath.Component] = []
            for text in components {
                guard let name = FilePath.Component(text), name.kind == .regular else {
                    throw DeliveryError(
                        code: .invalidName,
                        message: "\(text.debugDescription) is not a single folder name below \(root.string). \(DeliveryError.advice(for: .invalidName))"
                    )
                }
                componentNames.append(name)
            }
            let target = componentNames.reduce(root) { $0.appending($1) }
            let relative = componentNames.map(\.string).joined(separator: "/")
            guard !componentNames.isEmpty else {
                return Folder(descriptor: rootDescriptor, path: root, status: try Self.status(rootDescriptor, root))
            }
            if let opened = try? rootDescriptor.openBeneath(relative, .readOnly, options: [.directory]) {
                // One call when everything exists: the common case after the first delivery.
                let status = try Self.status(opened, target)
                return Folder(descriptor: opened, path: target, status: status, root: rootDescriptor, relativePath: relative)
            }
            for name in componentNames {
                let childPath = currentPath.appending(name)
                let child = try openChild(name, in: current, path: childPath, owner: owner, create: create)
                if current != rootDescriptor { current.closeIgnoringErrors() }
                current = child
                currentPath = childPath
            }
            let status = try Self.status(current, currentPath)
            return Folder(descriptor: current, path: currentPath, status: status, root: rootDescriptor, relativePath: relative)
        } catch {
            if current != rootDescriptor { current.closeIgnoringErrors() }
            rootDescriptor.closeIgnoringErrors()
            throw error
        }
    }

    private static func status(_ descriptor: FileDescriptor, _ path: FilePath) throws -> FileStatus {
        do {
            return try DeliveryError.performing("inspect", path.string) { try descriptor.status() }
        } catch {
            descriptor.closeIgnoringErrors()
            throw error
        }
    }

    private func openChild(
        _ name: FilePath.Component,
        in parent: FileDescriptor,
        path: FilePath,
        owner: Owner?,
        create: Bool
    ) throws -> FileDescriptor {
        var triedCreating = false
        var created = false
        while true {
            do {
                let child = try DeliveryError.performing("open", path.string) { try parent.open(name, .readOnly, options: [.directory]) }
                if created, let owner {
                    do {
                        // Whatever the umask: the mode first, then docrouted's ACL entry (while
                        // the folder is still its own, so no CAP_FOWNER is needed), then the owner.
                        try DeliveryError.performing("change mode of", path.string) { try child.changeMode(folderMode) }
                        if let accessUserID, accessUserID != owner.userID {
                            try DeliveryError.settingAccessList(path.string) { try child.setAccessList(ownerPermissions: 7, userID: accessUserID, userPermissions: 7) }
                        }
                        try DeliveryError.performing("change owner of", path.string) { try child.changeOwner(userID: owner.userID, groupID: owner.groupID) }
                    } catch {
                        child.closeIgnoringErrors()
                        throw error
                    }
                }
                return child
            } catch let error as DeliveryError where error.code == .vanished && create && !triedCreating {
                triedCreating = true
                // `false`: someone made it meanwhile; open what is there now, and leave its owner.
                created = try DeliveryError.performing("create folder", path.string) { try parent.makeDirectory(name, permissions: folderMode) }
            } catch let error as DeliveryError where error.code == .notDirectory || error.code == .symbolicLink {
                // O_NOFOLLOW | O_DIRECTORY reports a link as "not a directory": say which it is.
                let found = try DeliveryError.performing("inspect", path.string) { try parent.status(of: name) }
                if found?.isSymbolicLink == true {
                    throw DeliveryError(
                        code: .symbolicLink,
                        message: "\(path.string) is a symbolic link, not a folder. \(DeliveryError.advice(for: .symbolicLink))",
                        cause: error.errno
                    )
                }
                throw error
            }
        }
    }

    // MARK: Copying

    /// Copies an open source (never reopened by name) into a new temporary in `folder`: created
    /// with `O_EXCL` and mode 0600, given ``fileMode`` and `owner` once complete, hashed with
    /// SHA-256 on the way. The data is not synced here: the batch syncs once for all its copies.
    ///
    /// A sparse source (``copiesKeepingHoles(_:)``: `expected` says how much disk it takes) gives a
    /// sparse copy, its holes kept (see SandboxWriter+Holes.swift).
    ///
    /// The source must still have `expected`'s size and modification time once copied, or the
    /// copy is removed and ``DeliveryErrorCode/changed`` thrown: a file still being
    /// written is never delivered half. A source whose name was removed meanwhile is still copied
    /// whole (its descriptor keeps the data).
    ///
    /// - Parameters:
    ///   - buffer: scratch memory of at least 64 KiB, reused across copies.
    ///   - names: where the temporary's random name comes from, kept across copies too.
    ///   - syncData: `fdatasync` the copy before closing it (when the caller does not sync the
    ///     whole file system afterwards).
    package func copyToTemporary(
        from source: FileDescriptor,
        expected: FileStatus,
        describing sourcePath: String,
        into folder: Folder,
        owner: Owner?,
        buffer: UnsafeMutableRawBufferPointer,
        names: inout TemporaryNames,
        syncData: Bool = false
    ) throws -> TemporaryFile {
        guard expected.isRegularFile else {
            throw DeliveryError(
                code: .notRegularFile,
                message: "\(sourcePath) is not a regular file. \(DeliveryError.advice(for: .notRegularFile))"
            )
        }
        let (name, destination) = try createTemporary(in: folder, names: &names)
        let destinationPath = folder.path(of: name).string
        do {
            defer { destination.closeIgnoringErrors() }
            let digest: String
            if Self.copiesKeepingHoles(expected) {
                var hash: SHA256? = SHA256()
                try Self.copyKeepingHoles(from: source, size: expected.size, describing: sourcePath, to: destination,
                                          describing: destinationPath, buffer: buffer, hash: &hash)
                digest = Self.hex(hash!.finalize())
            } else if copyMethod.usesKernelCopy(size: expected.size) {
                digest = try copyInKernel(from: source, size: expected.size, describing: sourcePath, to: destination, describing: destinationPath, buffer: buffer)
            } else {
                digest = try copyReadingAndWriting(from: source, size: expected.size, describing: sourcePath, to: destination, describing: destinationPath, buffer: buffer)
            }
            let after = try DeliveryError.performing("inspect", sourcePath) { try source.status() }
            guard after.size == expected.size, after.modificationTimeNanoseconds == expected.modificationTimeNanoseconds else {
                throw DeliveryError(
                    code: .changed,
                    message: "\(sourcePath) changed while it was copied (\(expected.size) bytes when opened, \(after.size) after). \(DeliveryError.advice(for: .changed))"
                )
            }
            // Its device, inode and mode, which neither the hand-over nor a sync changes.
            let copy = try DeliveryError.performing("inspect", destinationPath) { try destination.status() }
            try handOver(destination, owner: owner, describing: destinationPath, mode: CModeT(copy.mode))
            let syncsByItself = syncsByItself(size: expected.size)
            if syncsByItself {
                // Its write-back started while it was copied: this waits for the tail, and its
                // mode and owner, never for what other programs left dirty on the file system.
                try DeliveryError.performing("sync", destinationPath) { try destination.sync() }
            } else if syncData {
                try DeliveryError.performing("sync data of", destinationPath) { try destination.syncData() }
            }
            return TemporaryFile(name: name, size: expected.size, sha256: digest, device: copy.device, inode: copy.inode,
                                 isSynced: syncsByItself)
        } catch {
            removeTemporary(name, in: folder)
            throw error
        }
    }

    /// Gives a copy ``fileMode`` and `owner`, with docrouted's read-only ACL entry when it hands
    /// the file to someone else without being root (recovery reads copies back to check them).
    /// `mode` is the copy's mode now (`st_mode`), when known: the change of mode is left out when
    /// it is already ``fileMode`` (the temporary is created 0600, which is ``fileMode`` unless a
    /// umask took bits away), a system call a file in a burst.
    func handOver(_ descriptor: FileDescriptor, owner: Owner?, describing path: String, mode: CModeT? = nil) throws {
        if mode.map({ $0 & 0o7777 }) != fileMode {
            try DeliveryError.performing("change mode of", path) { try descriptor.changeMode(fileMode) }
        }
        guard let owner else { return }
        if let accessUserID, accessUserID != owner.userID {
            try DeliveryError.settingAccessList(path) { try descriptor.setAccessList(ownerPermissions: UInt16((fileMode >> 6) & 7), userID: accessUserID, userPermissions: 4) }
        }
        try DeliveryError.performing("change owner of", path) { try descriptor.changeOwner(userID: owner.userID, groupID: owner.groupID) }
    }

    /// Checks that `folder` is still where it was opened: looked up again from its root with
    /// `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` (or a walk of `O_NOFOLLOW` opens where
    /// the kernel lacks openat2), it must be the same device and inode. A handler that moved its
    /// mailbox folder out of its container would otherwise get later copies written there.
    /// - Throws: ``DeliveryErrorCode/moved`` when it is gone or another folder.
    package func confirmInPlace(_ folder: Folder) throws {
        guard let root = folder.root else { return }
        let found: FileDescriptor
        do {
            if let opened = try DeliveryError.performing("open folder", folder.path.string, { try root.openBeneath(folder.relativePath, .readOnly, options: [.directory]) }) {
                found = opened
            } else {
                var current = root
                for text in folder.relativePath.split(separator: "/") {
                    guard let name = FilePath.Component(String(text)) else { throw Self.moved(folder) }
                    let child: FileDescriptor
                    do {
                        child = try DeliveryError.performing("open", folder.path.string) { try current.open(name, .readOnly, options: [.directory]) }
                    } catch {
                        if current != root { current.closeIgnoringErrors() }
                        throw error
                    }
                    if current != root { current.closeIgnoringErrors() }
                    current = child
                }
                found = current
            }
        } catch let error as DeliveryError where [.vanished, .notDirectory, .symbolicLink].contains(error.code) {
            throw Self.moved(folder)
        }
        defer { found.closeIgnoringErrors() }
        let status = try DeliveryError.performing("inspect", folder.path.string) { try found.status() }
        guard status.device == folder.status.device, status.inode == folder.status.inode else { throw Self.moved(folder) }
    }

    static func moved(_ folder: Folder) -> DeliveryError {
        DeliveryError(
            code: .moved,
            message: "\(folder.path.string) was moved or replaced while a copy was written into it. \(DeliveryError.advice(for: .moved))")
    }

    /// Removes a temporary, ignoring errors: it is only ever garbage.
    package func removeTemporary(_ name: String, in folder: Folder) {
        guard let component = FilePath.Component(name) else { return }
        _ = try? DeliveryError.performing("remove", folder.path(of: name).string) { try folder.descriptor.unlink(component) }
    }

    private func createTemporary(in folder: Folder, names: inout TemporaryNames) throws -> (String, FileDescriptor) {
        var attempts = 0
        while true {
            let name = names.next()
            do {
                let descriptor = try DeliveryError.performing("open", folder.path(of: name).string) { try folder.descriptor.open(FilePath.Component(name)!, .readWrite, options: [.create, .exclusiveCreate], permissions: 0o600) }
                return (name, descriptor)
            } catch let error as DeliveryError where error.errno == .fileExists && attempts < 8 {
                attempts += 1
            }
        }
    }

    private func copyReadingAndWriting(
        from source: FileDescriptor, size: Int64, describing sourcePath: String,
        to destination: FileDescriptor, describing destinationPath: String,
        buffer: UnsafeMutableRawBufferPointer
    ) throws -> String {
        var hash = SHA256()
        var offset: Int64 = 0
        while offset < size {
            let wanted = Int(min(Int64(buffer.count), size - offset))
            let chunk = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wanted])
            let count = try DeliveryError.performing("read", sourcePath) { try source.read(into: chunk, atOffset: offset) }
            if count == 0 { throw Self.truncated(sourcePath, expected: size, found: offset) }
            let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            hash.update(bufferPointer: bytes)
            try DeliveryError.performing("write", destinationPath) { try destination.writeAll(from: bytes) }
            offset += Int64(count)
        }
        return Self.hex(hash.finalize())
    }

    private func copyInKernel(
        from source: FileDescriptor, size: Int64, describing sourcePath: String,
        to destination: FileDescriptor, describing destinationPath: String,
        buffer: UnsafeMutableRawBufferPointer
    ) throws -> String {
        // A large copy is hashed by a second thread as it grows; a small one afterwards, here.
        let follower = size >= Self.followingHashThreshold ? CopyHashFollower(copy: destination, path: destinationPath) : nil
        var offset: Int64 = 0
        do {
            defer { follower?.finish() }
            while offset < size {
                let count: Int
                // In steps, so that the follower can hash one while the kernel copies the next.
                let step = follower == nil ? Int(size - offset) : Int(min(size - offset, Self.followingHashStep))
                do {
                    count = try DeliveryError.performing("copy", sourcePath) { try source.copyFileRange(from: &offset, to: destination, count: step) }
                } catch let error as DeliveryError where offset == 0 && [.improperLink, .invalidArgument, .noFunction, .notSupported, .notPermitted].contains(error.errno) {
                    // The kernel cannot copy between these two (file systems, types): do it ourselves.
                    follower?.finish()
                    _ = try? follower?.digest()
                    return try copyReadingAndWriting(from: source, size: size, describing: sourcePath, to: destination, describing: destinationPath, buffer: buffer)
                }
                if count == 0 { throw Self.truncated(sourcePath, expected: size, found: offset) }
                if let follower {
                    follower.copied(upTo: offset)
                    // The disk writes this step while the kernel copies the next and the follower
                    // hashes: `cp` then `fsync` writes everything only at the end.
                    destination.startWriteback(from: offset - Int64(count), count: Int64(count))
                }
            }
        } catch {
            _ = try? follower?.digest()
            throw error
        }
        if let follower {
            let (digest, hashed) = try follower.digest()
            guard hashed == size else { throw Self.truncated(destinationPath, expected: size, found: hashed) }
            return digest
        }
        // The bytes never passed through here: hash what landed in the copy.
        var hash = SHA256()
        var position: Int64 = 0
        while position < size {
            let count = try DeliveryError.performing("read", destinationPath) { try destination.read(into: buffer, atOffset: position) }
            if count == 0 { throw Self.truncated(destinationPath, expected: size, found: position) }
            hash.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            position += Int64(count)
        }
        return Self.hex(hash.finalize())
    }

    /// From this size on, the file is hashed by a second thread while it is copied (a 1 GiB file
    /// read back and hashed after its copy went at 0.58 of `cp`'s speed), its write-back started
    /// step by step as it is copied, and it is synced by itself (``syncsByItself(size:)``).
    static let followingHashThreshold: Int64 = 16 << 20

    /// Whether a copy of `size` bytes is made durable by its own `fsync` as soon as it is complete,
    /// rather than by the batch's `syncfs`: a large copy, whose write-back started while it was
    /// copied. A `syncfs` would also wait for everything other programs left dirty on the file
    /// system (on a shared machine, gigabytes), which a 4 KiB file shares among 256 but a 1 GiB
    /// file pays alone.
    func syncsByItself(size: Int64) -> Bool {
        copyMethod.usesKernelCopy(size: size) && size >= Self.followingHashThreshold
    }
    /// How much the kernel copies between two reports to the hashing thread.
    static let followingHashStep: Int64 = 8 << 20

    static func truncated(_ path: String, expected: Int64, found: Int64) -> DeliveryError {
        DeliveryError(
            code: .changed,
            message: "\(path) ended after \(found) of its \(expected) bytes: it was truncated while being copied. \(DeliveryError.advice(for: .changed))"
        )
    }

    /// SHA-256 (lowercase hex) of a file in `folder`, opened without following a link.
    package func sha256(of name: String, in folder: Folder) throws -> String {
        guard let component = FilePath.Component(name) else {
            throw DeliveryError(code: .invalidName, message: "\(name.debugDescription) is not a file name.")
        }
        let path = folder.path(of: name).string
        let descriptor = try DeliveryError.performing("open", path) { try folder.descriptor.open(component, .readOnly, options: [.nonBlocking]) }
        defer { descriptor.closeIgnoringErrors() }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 4096)
        defer { buffer.deallocate() }
        var hash = SHA256()
        var offset: Int64 = 0
        while true {
            let count = try DeliveryError.performing("read", path) { try descriptor.read(into: buffer, atOffset: offset) }
            if count == 0 { return Self.hex(hash.finalize()) }
            hash.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            offset += Int64(count)
        }
    }

    // MARK: Naming

    /// The first candidate of `name`, from `counter` on, that is neither in `reserved` nor present
    /// in `folder` (a symbolic link or anything else counts as present).
    /// - Throws: ``DeliveryErrorCode/nameExhausted`` after 100,000 taken candidates.
    package func firstFreeName(
        _ name: SandboxName,
        in folder: Folder,
        from counter: Int = 0,
        excluding reserved: Set<String> = []
    ) throws -> (name: String, counter: Int) {
        for attempt in counter..<(counter + 100_000) {
            let candidate = name.candidate(attempt)
            if reserved.contains(candidate) { continue }
            guard let component = FilePath.Component(candidate) else {
                throw DeliveryError(code: .invalidName, message: "\(candidate.debugDescription) is not a file name.")
            }
            if try DeliveryError.performing("inspect", folder.path(of: candidate).string, { try folder.descriptor.status(of: component) }) == nil {
                return (candidate, attempt)
            }
        }
        throw DeliveryError(
            code: .nameExhausted,
            message: "Every name from \(name.candidate(counter)) on is taken in \(folder.path.string). \(DeliveryError.advice(for: .nameExhausted))"
        )
    }

    /// Renames a temporary to its final name without replacing anything; `false` if that name
    /// was taken meanwhile.
    package func place(_ temporaryName: String, as finalName: String, in folder: Folder) throws -> Bool {
        guard let from = FilePath.Component(temporaryName), let to = FilePath.Component(finalName) else {
            throw DeliveryError(code: .invalidName, message: "\(finalName.debugDescription) is not a file name.")
        }
        do {
            return try DeliveryError.performing("rename", folder.path(of: finalName).string) { try folder.descriptor.renameNoReplace(from, to: to, in: folder.descriptor) }
        } catch let error as DeliveryError where error.code == .vanished {
            // ENOENT here names our temporary (or its folder), never the source, which is held
            // open: reported as `vanished`, the source would be given up although it is still in
            // its inbox. Someone removed the copy; the source is copied again.
            throw DeliveryError(
                code: .copyRemoved,
                message: "\(folder.path(of: temporaryName).string), the copy made for \(finalName), was removed before it was put in place. \(DeliveryError.advice(for: .copyRemoved))",
                cause: error.errno)
        }
    }
}
