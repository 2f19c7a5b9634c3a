import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What `stat(2)` tells about a file, in the units the daemon keeps: a plain value to compare and
/// store (swift-system's `Stat` carries the whole C struct and no way to build one from parts).
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
    /// Bytes of disk the file takes (`st_blocks` × 512); nil when the status was made by other
    /// means than `stat`. Less than ``size`` for a file with holes (a sparse file).
    package var allocatedBytes: Int64?

    /// Creates a status from its parts (tests and callers that stat by other means).
    package init(
        device: UInt64,
        inode: UInt64,
        mode: UInt32 = UInt32(S_IFREG) | 0o644,
        linkCount: UInt64 = 1,
        userID: UInt32 = 0,
        groupID: UInt32 = 0,
        size: Int64,
        modificationTimeNanoseconds: Int64,
        allocatedBytes: Int64? = nil
    ) {
        self.device = device
        self.inode = inode
        self.mode = mode
        self.linkCount = linkCount
        self.userID = userID
        self.groupID = groupID
        self.size = size
        self.modificationTimeNanoseconds = modificationTimeNanoseconds
        self.allocatedBytes = allocatedBytes
    }

    /// The parts of swift-system's `Stat` that the daemon uses.
    package init(_ status: Stat) {
        let modified = status.st_mtim
        self.init(
            device: UInt64(status.deviceID.rawValue),
            inode: UInt64(status.inode.rawValue),
            mode: UInt32(status.mode.rawValue),
            linkCount: UInt64(status.linkCount),
            userID: UInt32(status.userID.rawValue),
            groupID: UInt32(status.groupID.rawValue),
            size: status.size,
            modificationTimeNanoseconds: Int64(modified.tv_sec) * 1_000_000_000 + Int64(modified.tv_nsec),
            // st_blocks counts 512-byte units whatever the file system's block size (stat(2)).
            allocatedBytes: Int64(status.blocksAllocated) * 512
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
