import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension SystemCall {
    /// What `fstat(2)` tells about a file, in the units delivery needs.
    package struct FileStatus: Sendable, Hashable {
        /// `st_dev`.
        package var device: UInt64
        /// `st_ino`.
        package var inode: UInt64
        /// `st_mode` (type and permission bits).
        package var mode: UInt32
        /// `st_nlink`; 0 once every name of an open file was removed.
        package var linkCount: UInt64
        /// `st_uid`.
        package var userID: UInt32
        /// `st_gid`.
        package var groupID: UInt32
        /// `st_size` in bytes.
        package var size: Int64
        /// `st_mtim` in nanoseconds since 1970.
        package var modificationTimeNanoseconds: Int64

        /// Creates a status from its parts (tests and callers that stat by other means).
        package init(
            device: UInt64,
            inode: UInt64,
            mode: UInt32 = UInt32(S_IFREG) | 0o644,
            linkCount: UInt64 = 1,
            userID: UInt32 = 0,
            groupID: UInt32 = 0,
            size: Int64,
            modificationTimeNanoseconds: Int64
        ) {
            self.device = device
            self.inode = inode
            self.mode = mode
            self.linkCount = linkCount
            self.userID = userID
            self.groupID = groupID
            self.size = size
            self.modificationTimeNanoseconds = modificationTimeNanoseconds
        }

        package init(_ status: stat) {
            self.init(
                device: UInt64(status.st_dev),
                inode: UInt64(status.st_ino),
                mode: UInt32(status.st_mode),
                linkCount: UInt64(status.st_nlink),
                userID: UInt32(status.st_uid),
                groupID: UInt32(status.st_gid),
                size: Int64(status.st_size),
                modificationTimeNanoseconds: Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
            )
        }

        private var type: UInt32 { mode & UInt32(S_IFMT) }
        /// A regular file.
        package var isRegularFile: Bool { type == UInt32(S_IFREG) }
        /// A folder.
        package var isDirectory: Bool { type == UInt32(S_IFDIR) }
        /// A symbolic link (only seen when not following links).
        package var isSymbolicLink: Bool { type == UInt32(S_IFLNK) }

        /// The same file: same device and inode.
        package func isSameFile(as other: FileStatus) -> Bool {
            device == other.device && inode == other.inode
        }
    }

    /// `fstat(2)`.
    package static func status(of descriptor: FileDescriptor, describing: @autoclosure () -> String) throws -> FileStatus {
        var result = stat()
        _ = try check("inspect", describing()) { Glibc.fstat(descriptor.rawValue, &result) }
        return FileStatus(result)
    }

    /// `fstatat(2)` of one name in `directory`, never following a symbolic link; `nil` if there is
    /// no such name.
    package static func status(
        of name: FilePath.Component,
        in directory: FileDescriptor,
        describing: @autoclosure () -> String
    ) throws -> FileStatus? {
        var result = stat()
        let outcome = name.withPlatformString { cName in
            retryingOnInterrupt { Glibc.fstatat(directory.rawValue, cName, &result, AT_SYMLINK_NOFOLLOW) }
        }
        switch outcome {
        case .success: return FileStatus(result)
        case .failure(.noSuchFileOrDirectory): return nil
        case .failure(let errno): throw DeliveryError(errno: errno, operation: "inspect", path: describing())
        }
    }

    /// The names in a folder (without `.` and `..`), read through a new descriptor of the same
    /// folder (`openat(directory, ".")`) so the caller's descriptor and its position stay untouched.
    package static func names(in directory: FileDescriptor, describing: @autoclosure () -> String) throws -> [FilePath.Component] {
        let reopened = try check("open folder", describing()) {
            Glibc.openat(directory.rawValue, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        }
        guard let stream = Glibc.fdopendir(reopened) else {
            let errno = Errno(rawValue: Glibc.errno)
            _ = Glibc.close(reopened)
            throw DeliveryError(errno: errno, operation: "list folder", path: describing())
        }
        defer { Glibc.closedir(stream) }
        var names: [FilePath.Component] = []
        while true {
            Glibc.errno = 0
            guard let entry = Glibc.readdir(stream) else {
                if Glibc.errno != 0 {
                    throw DeliveryError(errno: Errno(rawValue: Glibc.errno), operation: "list folder", path: describing())
                }
                return names
            }
            let component = withUnsafeBytes(of: entry.pointee.d_name) { raw -> FilePath.Component? in
                let characters = raw.bindMemory(to: CChar.self)
                return FilePath.Component(platformString: characters.baseAddress!)
            }
            // `.` and `..` are not names of anything in the folder.
            guard let component, component.kind == .regular else { continue }
            names.append(component)
        }
    }
}
