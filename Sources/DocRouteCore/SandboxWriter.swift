import Crypto
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Writes files into folders that someone else controls (a handler's sandbox, the quarantine),
/// without ever following a symbolic link there or writing outside them.
///
/// Folders are opened from a descriptor of their root, one component at a time with
/// `O_NOFOLLOW | O_DIRECTORY` (or in one `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`), and
/// every later operation is relative to the folder's descriptor. A handler that replaces a folder
/// of its sandbox with a symbolic link gets a ``DeliveryError/Code-swift.enum/symbolicLink`` error.
public struct SandboxWriter: Sendable {
    /// Who should own delivered files and created folders.
    public struct Owner: Sendable, Hashable {
        /// The owner's uid.
        public var userID: UInt32
        /// The owner's gid.
        public var groupID: UInt32

        /// Creates an owner.
        public init(userID: UInt32, groupID: UInt32) {
            self.userID = userID
            self.groupID = groupID
        }
    }

    /// How bytes get from the source to the temporary copy.
    public enum CopyMethod: Sendable, Hashable {
        /// `pread`/`write` through one buffer, hashing the bytes on the way: fastest for small
        /// files (one read, one write, no second pass).
        case readWrite
        /// `copy_file_range` in the kernel (a reflink where the file system can), then the copy is
        /// read back from the page cache to hash it (from 16 MiB on, the source is hashed by a
        /// second thread while the kernel copies: ``CopyHashFollower``); falls back to
        /// `readWrite` where the kernel refuses. Fastest for large files.
        case copyFileRange
        /// `readWrite` below `threshold` bytes, `copyFileRange` from there on. The default, with
        /// 1 MiB (see the measurements in the project's notes).
        case automatic(threshold: Int64)

        /// ``automatic(threshold:)`` at 1 MiB.
        public static let `default` = CopyMethod.automatic(threshold: 1 << 20)

        func usesKernelCopy(size: Int64) -> Bool {
            switch self {
            case .readWrite: false
            case .copyFileRange: true
            case .automatic(let threshold): size >= threshold
            }
        }
    }

    /// An open folder to write into.
    public struct Folder: Sendable {
        /// The folder's descriptor; every name below is relative to it.
        public let descriptor: FileDescriptor
        /// The folder's path, for the ledger and for messages.
        public let path: FilePath
        /// The folder's device and inode.
        public let status: SystemCall.FileStatus
        /// The root it was opened from, kept open so that ``SandboxWriter/confirmInPlace(_:)`` can
        /// look the folder up again from there; nil when the folder is the root itself.
        let root: FileDescriptor?
        /// The folder's path below `root`.
        let relativePath: String

        init(descriptor: FileDescriptor, path: FilePath, status: SystemCall.FileStatus, root: FileDescriptor? = nil, relativePath: String = "") {
            self.descriptor = descriptor
            self.path = path
            self.status = status
            self.root = root
            self.relativePath = relativePath
        }

        /// The path of a name in this folder.
        public func path(of name: String) -> FilePath { path.appending(name) }

        /// Closes the folder's descriptor (and its root's).
        public func close() {
            SystemCall.close(descriptor)
            if let root { SystemCall.close(root) }
        }
    }

    /// A synced-later copy under a temporary name in a folder.
    public struct TemporaryFile: Sendable, Hashable {
        /// `.docroute-<random>.tmp`.
        public var name: String
        /// Bytes copied.
        public var size: Int64
        /// SHA-256 of the bytes, lowercase hex.
        public var sha256: String
        /// The copy's device and inode (a rename keeps them).
        public var device: UInt64
        /// The copy's inode.
        public var inode: UInt64
        /// Already durable, data and metadata (a large copy is synced by itself, see
        /// ``SandboxWriter/syncsByItself(size:)``): the batch's `syncfs` need not wait for it.
        var isSynced = false
    }

    /// Names of temporaries start with this and end with ``temporarySuffix``; a sanitised final
    /// name never starts with a dot, so the two can never be confused.
    public static let temporaryPrefix = ".docroute-"
    /// See ``temporaryPrefix``.
    public static let temporarySuffix = ".tmp"

    /// Mode of created folders: a handler's sandbox is its own (issue 16: the admin group, which
    /// holds the mail delivery agent, once read and planted documents through group bits).
    public var folderMode: mode_t = 0o700
    /// Mode of delivered files.
    public var fileMode: mode_t = 0o600
    /// The uid a POSIX ACL entry is given on what is handed to another owner (rwx on folders, read
    /// on files): docrouted's own when it is not root, which has no other way back into a 0700
    /// folder it gave away (it runs without CAP_DAC_OVERRIDE). Nil when docrouted is root.
    public var accessUserID: UInt32?
    /// How to copy.
    public var copyMethod: CopyMethod

    /// Creates a writer.
    public init(copyMethod: CopyMethod = .default) {
        self.copyMethod = copyMethod
    }

    /// Whether a name is one of our temporaries.
    public static func isTemporaryName(_ name: String) -> Bool {
        name.hasPrefix(temporaryPrefix) && name.hasSuffix(temporarySuffix)
    }

    // MARK: Folders

    /// Opens `root/components[0]/components[1]/…`, creating what is missing when `create` is true
    /// (owned by `owner` when one is given; the caller gives one only when it may chown).
    ///
    /// `root` itself must exist and may not be a symbolic link; no component below it may be one.
    /// - Throws: ``DeliveryError`` (`symbolicLink`, `notDirectory`, `vanished` when `create` is
    ///   false and a folder is missing, `permissionDenied`, …).
    public func openFolder(root: FilePath, components: [String], owner: Owner?, create: Bool) throws -> Folder {
        let rootDescriptor = try SystemCall.openDirectory(root)
        var current = rootDescriptor
        var currentPath = root
        do {
            var componentNames: [FilePath.Component] = []
            for text in components {
                guard let name = FilePath.Component(text), name.kind == .regular else {
                    throw DeliveryError(
                        code: .invalidName,
                        message: "\(text.debugDescription) is not a single folder name below \(root.string). \(DeliveryError.advice(for: .invalidName))",
                        path: root.string
                    )
                }
                componentNames.append(name)
            }
            let target = componentNames.reduce(root) { $0.appending($1) }
            let relative = componentNames.map(\.string).joined(separator: "/")
            guard !componentNames.isEmpty else {
                return Folder(descriptor: rootDescriptor, path: root, status: try Self.status(rootDescriptor, root))
            }
            if let opened = try? SystemCall.openBeneath(relative, in: rootDescriptor, flags: O_RDONLY | O_DIRECTORY, describing: target.string) {
                // One call when everything exists: the common case after the first delivery.
                let status = try Self.status(opened, target)
                return Folder(descriptor: opened, path: target, status: status, root: rootDescriptor, relativePath: relative)
            }
            for name in componentNames {
                let childPath = currentPath.appending(name)
                let child = try openChild(name, in: current, path: childPath, owner: owner, create: create)
                if current != rootDescriptor { SystemCall.close(current) }
                current = child
                currentPath = childPath
            }
            let status = try Self.status(current, currentPath)
            return Folder(descriptor: current, path: currentPath, status: status, root: rootDescriptor, relativePath: relative)
        } catch {
            if current != rootDescriptor { SystemCall.close(current) }
            SystemCall.close(rootDescriptor)
            throw error
        }
    }

    private static func status(_ descriptor: FileDescriptor, _ path: FilePath) throws -> SystemCall.FileStatus {
        do {
            return try SystemCall.status(of: descriptor, describing: path.string)
        } catch {
            SystemCall.close(descriptor)
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
                let child = try SystemCall.open(name, in: parent, flags: O_RDONLY | O_DIRECTORY, describing: path.string)
                if created, let owner {
                    do {
                        // Whatever the umask: the mode first, then docrouted's ACL entry (while
                        // the folder is still its own, so no CAP_FOWNER is needed), then the owner.
                        try SystemCall.changeMode(child, folderMode, describing: path.string)
                        if let accessUserID, accessUserID != owner.userID {
                            try SystemCall.setAccessList(child, ownerPermissions: 7, userID: accessUserID, userPermissions: 7, describing: path.string)
                        }
                        try SystemCall.changeOwner(child, userID: owner.userID, groupID: owner.groupID, describing: path.string)
                    } catch {
                        SystemCall.close(child)
                        throw error
                    }
                }
                return child
            } catch let error as DeliveryError where error.code == .vanished && create && !triedCreating {
                triedCreating = true
                // `false`: someone made it meanwhile; open what is there now, and leave its owner.
                created = try SystemCall.makeDirectory(name, in: parent, permissions: folderMode, describing: path.string)
            } catch let error as DeliveryError where error.code == .notDirectory || error.code == .symbolicLink {
                // O_NOFOLLOW | O_DIRECTORY reports a link as "not a directory": say which it is.
                let found = try SystemCall.status(of: name, in: parent, describing: path.string)
                if found?.isSymbolicLink == true {
                    throw DeliveryError(
                        code: .symbolicLink,
                        message: "\(path.string) is a symbolic link, not a folder. \(DeliveryError.advice(for: .symbolicLink))",
                        errno: error.errno,
                        path: path.string
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
    /// The source must still have `expected`'s size and modification time once copied, or the
    /// copy is removed and ``DeliveryError/Code-swift.enum/changed`` thrown: a file still being
    /// written is never delivered half. A source whose name was removed meanwhile is still copied
    /// whole (its descriptor keeps the data).
    ///
    /// - Parameters:
    ///   - buffer: scratch memory of at least 64 KiB, reused across copies.
    ///   - syncData: `fdatasync` the copy before closing it (when the caller does not sync the
    ///     whole file system afterwards).
    public func copyToTemporary(
        from source: FileDescriptor,
        expected: SystemCall.FileStatus,
        describing sourcePath: String,
        into folder: Folder,
        owner: Owner?,
        buffer: UnsafeMutableRawBufferPointer,
        syncData: Bool = false
    ) throws -> TemporaryFile {
        guard expected.isRegularFile else {
            throw DeliveryError(
                code: .notRegularFile,
                message: "\(sourcePath) is not a regular file. \(DeliveryError.advice(for: .notRegularFile))",
                path: sourcePath
            )
        }
        let (name, destination) = try createTemporary(in: folder)
        let destinationPath = folder.path(of: name).string
        do {
            defer { SystemCall.close(destination) }
            let digest: String
            if copyMethod.usesKernelCopy(size: expected.size) {
                digest = try copyInKernel(from: source, size: expected.size, describing: sourcePath, to: destination, describing: destinationPath, buffer: buffer)
            } else {
                digest = try copyReadingAndWriting(from: source, size: expected.size, describing: sourcePath, to: destination, describing: destinationPath, buffer: buffer)
            }
            let after = try SystemCall.status(of: source, describing: sourcePath)
            guard after.size == expected.size, after.modificationTimeNanoseconds == expected.modificationTimeNanoseconds else {
                throw DeliveryError(
                    code: .changed,
                    message: "\(sourcePath) changed while it was copied (\(expected.size) bytes when opened, \(after.size) after). \(DeliveryError.advice(for: .changed))",
                    path: sourcePath
                )
            }
            try handOver(destination, owner: owner, describing: destinationPath)
            let syncsByItself = syncsByItself(size: expected.size)
            if syncsByItself {
                // Its write-back started while it was copied: this waits for the tail, and its
                // mode and owner, never for what other programs left dirty on the file system.
                try SystemCall.fsync(destination, describing: destinationPath)
            } else if syncData {
                try SystemCall.dataSync(destination, describing: destinationPath)
            }
            let copy = try SystemCall.status(of: destination, describing: destinationPath)
            return TemporaryFile(name: name, size: expected.size, sha256: digest, device: copy.device, inode: copy.inode,
                                 isSynced: syncsByItself)
        } catch {
            removeTemporary(name, in: folder)
            throw error
        }
    }

    /// Gives a copy ``fileMode`` and `owner`, with docrouted's read-only ACL entry when it hands
    /// the file to someone else without being root (recovery reads copies back to check them).
    func handOver(_ descriptor: FileDescriptor, owner: Owner?, describing path: String) throws {
        try SystemCall.changeMode(descriptor, fileMode, describing: path)
        guard let owner else { return }
        if let accessUserID, accessUserID != owner.userID {
            try SystemCall.setAccessList(descriptor, ownerPermissions: UInt16((fileMode >> 6) & 7), userID: accessUserID, userPermissions: 4, describing: path)
        }
        try SystemCall.changeOwner(descriptor, userID: owner.userID, groupID: owner.groupID, describing: path)
    }

    /// Checks that `folder` is still where it was opened: looked up again from its root with
    /// `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` (or a walk of `O_NOFOLLOW` opens where
    /// the kernel lacks openat2), it must be the same device and inode. A handler that moved its
    /// mailbox folder out of its container would otherwise get later copies written there.
    /// - Throws: ``DeliveryError/Code-swift.enum/moved`` when it is gone or another folder.
    public func confirmInPlace(_ folder: Folder) throws {
        guard let root = folder.root else { return }
        let found: FileDescriptor
        do {
            if let opened = try SystemCall.openBeneath(folder.relativePath, in: root, flags: O_RDONLY | O_DIRECTORY, describing: folder.path.string) {
                found = opened
            } else {
                var current = root
                for text in folder.relativePath.split(separator: "/") {
                    guard let name = FilePath.Component(String(text)) else { throw Self.moved(folder) }
                    let child: FileDescriptor
                    do {
                        child = try SystemCall.open(name, in: current, flags: O_RDONLY | O_DIRECTORY, describing: folder.path.string)
                    } catch {
                        if current != root { SystemCall.close(current) }
                        throw error
                    }
                    if current != root { SystemCall.close(current) }
                    current = child
                }
                found = current
            }
        } catch let error as DeliveryError where [.vanished, .notDirectory, .symbolicLink].contains(error.code) {
            throw Self.moved(folder)
        }
        defer { SystemCall.close(found) }
        let status = try SystemCall.status(of: found, describing: folder.path.string)
        guard status.device == folder.status.device, status.inode == folder.status.inode else { throw Self.moved(folder) }
    }

    static func moved(_ folder: Folder) -> DeliveryError {
        DeliveryError(
            code: .moved,
            message: "\(folder.path.string) was moved or replaced while a copy was written into it. \(DeliveryError.advice(for: .moved))",
            path: folder.path.string)
    }

    /// Removes a temporary, ignoring errors: it is only ever garbage.
    public func removeTemporary(_ name: String, in folder: Folder) {
        guard let component = FilePath.Component(name) else { return }
        _ = try? SystemCall.unlink(component, in: folder.descriptor, describing: folder.path(of: name).string)
    }

    private func createTemporary(in folder: Folder) throws -> (String, FileDescriptor) {
        var attempts = 0
        while true {
            var random = SystemRandomNumberGenerator()
            let name = Self.temporaryPrefix + Self.hex(withUnsafeBytes(of: random.next() as UInt64) { Array($0) }) + Self.temporarySuffix
            do {
                let descriptor = try SystemCall.open(
                    FilePath.Component(name)!, in: folder.descriptor,
                    // Readable too: an in-kernel copy is read back to hash it.
                    flags: O_RDWR | O_CREAT | O_EXCL, permissions: 0o600,
                    describing: folder.path(of: name).string)
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
            let count = try SystemCall.read(source, into: chunk, at: offset, describing: sourcePath)
            if count == 0 { throw Self.truncated(sourcePath, expected: size, found: offset) }
            let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            hash.update(bufferPointer: bytes)
            try SystemCall.writeAll(destination, bytes, describing: destinationPath)
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
        let follower = size >= Self.followingHashThreshold ? CopyHashFollower(source: source, path: sourcePath) : nil
        var offset: Int64 = 0
        do {
            defer { follower?.finish() }
            while offset < size {
                let count: Int
                // In steps, so that the follower can hash one while the kernel copies the next.
                let step = follower == nil ? Int(size - offset) : Int(min(size - offset, Self.followingHashStep))
                do {
                    count = try SystemCall.copyFileRange(from: source, at: &offset, to: destination, count: step, describing: sourcePath)
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
                    SystemCall.startWriteback(destination, from: offset - Int64(count), count: Int64(count))
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
            let count = try SystemCall.read(destination, into: buffer, at: position, describing: destinationPath)
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

    private static func truncated(_ path: String, expected: Int64, found: Int64) -> DeliveryError {
        DeliveryError(
            code: .changed,
            message: "\(path) ended after \(found) of its \(expected) bytes: it was truncated while being copied. \(DeliveryError.advice(for: .changed))",
            path: path
        )
    }

    /// SHA-256 (lowercase hex) of a file in `folder`, opened without following a link.
    public func sha256(of name: String, in folder: Folder) throws -> String {
        guard let component = FilePath.Component(name) else {
            throw DeliveryError(code: .invalidName, message: "\(name.debugDescription) is not a file name.", path: folder.path.string)
        }
        let path = folder.path(of: name).string
        let descriptor = try SystemCall.open(component, in: folder.descriptor, flags: O_RDONLY | O_NONBLOCK, describing: path)
        defer { SystemCall.close(descriptor) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 4096)
        defer { buffer.deallocate() }
        var hash = SHA256()
        var offset: Int64 = 0
        while true {
            let count = try SystemCall.read(descriptor, into: buffer, at: offset, describing: path)
            if count == 0 { return Self.hex(hash.finalize()) }
            hash.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            offset += Int64(count)
        }
    }

    // MARK: Naming

    /// The first candidate of `name`, from `counter` on, that is neither in `reserved` nor present
    /// in `folder` (a symbolic link or anything else counts as present).
    /// - Throws: ``DeliveryError/Code-swift.enum/nameExhausted`` after 100,000 taken candidates.
    public func firstFreeName(
        _ name: SandboxName,
        in folder: Folder,
        from counter: Int = 0,
        excluding reserved: Set<String> = []
    ) throws -> (name: String, counter: Int) {
        for attempt in counter..<(counter + 100_000) {
            let candidate = name.candidate(attempt)
            if reserved.contains(candidate) { continue }
            guard let component = FilePath.Component(candidate) else {
                throw DeliveryError(code: .invalidName, message: "\(candidate.debugDescription) is not a file name.", path: folder.path.string)
            }
            if try SystemCall.status(of: component, in: folder.descriptor, describing: folder.path(of: candidate).string) == nil {
                return (candidate, attempt)
            }
        }
        throw DeliveryError(
            code: .nameExhausted,
            message: "Every name from \(name.candidate(counter)) on is taken in \(folder.path.string). \(DeliveryError.advice(for: .nameExhausted))",
            path: folder.path.string
        )
    }

    /// Renames a temporary to its final name without replacing anything; `false` if that name
    /// was taken meanwhile.
    public func place(_ temporaryName: String, as finalName: String, in folder: Folder) throws -> Bool {
        guard let from = FilePath.Component(temporaryName), let to = FilePath.Component(finalName) else {
            throw DeliveryError(code: .invalidName, message: "\(finalName.debugDescription) is not a file name.", path: folder.path.string)
        }
        return try SystemCall.renameNoReplace(from, in: folder.descriptor, to: to, in: folder.descriptor, describing: folder.path(of: finalName).string)
    }
}
