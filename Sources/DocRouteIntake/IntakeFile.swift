import DocRoutePlatform
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// A file taken in from an inbox: opened once without following links, checked, its head read.
/// Everything after this reads from ``descriptor``, never the name again.
package struct IntakeFile: Sendable {
    /// Why a directory entry is not taken in.
    package enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        /// Gone before it could be opened: nothing to do.
        case vanished
        /// A symbolic link: never followed.
        case symbolicLink
        /// A folder: a mailbox or a package, handled by the caller.
        case directory
        /// A FIFO, socket or device: not a document. Carries the kind for the reason file.
        case notRegularFile(String)
        /// Bigger than `max_file_size`.
        case tooLarge(size: Int64, limit: Int64)
        /// Cannot be read (permissions, I/O).
        case unreadable(errno: Int32)

        package var description: String {
            switch self {
            case .vanished: "the file disappeared before it was read"
            case .symbolicLink: "it is a symbolic link; docroute never follows links in an inbox"
            case .directory: "it is a folder"
            case .notRegularFile(let kind): "it is a \(kind), not a regular file"
            case .tooLarge(let size, let limit): "it is \(size) bytes, over max_file_size (\(limit) bytes)"
            case .unreadable(let code): "it cannot be read: \(String(cString: strerror(code)))"
            }
        }
    }

    package let descriptor: Int32
    package let device: UInt64
    package let inode: UInt64
    package let size: Int64
    package let modificationTimeNanoseconds: Int64
    package let ownerUID: UInt32
    package let linkCount: UInt64
    /// The first bytes, for content typing.
    package let head: [UInt8]

    /// Opens `name` inside the folder `directory` (a descriptor) with `O_NOFOLLOW|O_NONBLOCK`.
    ///
    /// `O_NONBLOCK` means a FIFO dropped in an inbox never blocks the open; it is refused after
    /// `fstat`. The caller owns the returned descriptor and must close it.
    package static func open(name: [UInt8], in directory: Int32, maxSize: Int64, headLength: Int = 4096) -> Result<IntakeFile, Refusal> {
        let fd = name.withUnsafeBufferPointer { bytes -> Int32 in
            var terminated = Array(bytes)
            terminated.append(0)
            return terminated.withUnsafeBufferPointer { pointer in
                pointer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: pointer.count) { path in
                    retryingOnInterrupt { openat(directory, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY) }
                }
            }
        }
        guard fd >= 0 else {
            switch errno {
            case ENOENT: return .failure(.vanished)
            case ELOOP: return .failure(.symbolicLink)
            case ENXIO: return .failure(.notRegularFile("socket"))
            default: return .failure(.unreadable(errno: errno))
            }
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            return .failure(.unreadable(errno: code))
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG:
            break
        case S_IFDIR:
            close(fd)
            return .failure(.directory)
        default:
            close(fd)
            return .failure(.notRegularFile(kindName(info.st_mode)))
        }
        guard Int64(info.st_size) <= maxSize else {
            close(fd)
            return .failure(.tooLarge(size: Int64(info.st_size), limit: maxSize))
        }
        // Back to blocking reads for the copy; the descriptor is a regular file now.
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK)
        switch reading(fd, info, headLength: headLength) {
        case .success(let file): return .success(file)
        case .failure(let error):
            close(fd)
            return .failure(.unreadable(errno: error.rawValue))
        }
    }

    /// The file open on `descriptor` (described by `info`) with its first `headLength` bytes, read
    /// from offset 0 with pread whatever its position; on failure the errno. The descriptor stays
    /// open either way: the caller owns it.
    static func reading(_ descriptor: Int32, _ info: stat, headLength: Int) -> Result<IntakeFile, Errno> {
        var head = [UInt8](repeating: 0, count: min(headLength, max(Int(info.st_size), 0)))
        var filled = 0
        while filled < head.count {
            let count = head.withUnsafeMutableBytes { buffer in
                retryingOnInterrupt { pread(descriptor, buffer.baseAddress! + filled, buffer.count - filled, off_t(filled)) }
            }
            if count < 0 { return .failure(Errno(rawValue: errno)) }
            if count == 0 { break }
            filled += count
        }
        head.removeSubrange(filled...)
        return .success(IntakeFile(
            descriptor: descriptor, device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
            modificationTimeNanoseconds: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec),
            ownerUID: info.st_uid, linkCount: UInt64(info.st_nlink), head: head))
    }

    static func kindName(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: "FIFO"
        case S_IFSOCK: "socket"
        case S_IFCHR: "character device"
        case S_IFBLK: "block device"
        case S_IFLNK: "symbolic link"
        default: "special file"
        }
    }
}
