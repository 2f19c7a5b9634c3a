import DocRoutePlatform
import SystemPackage

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
        /// Its copy would take more disk than `max_file_allocation` (the smaller of its size and its allocated blocks).
        case takesTooMuchDisk(allocated: Int64, limit: Int64)
        /// Cannot be read (permissions, I/O).
        case unreadable(errno: Int32)

        package var description: String {
            switch self {
            case .vanished: "the file disappeared before it was read"
            case .symbolicLink: "it is a symbolic link; docroute never follows links in an inbox"
            case .directory: "it is a folder"
            case .notRegularFile(let kind): "it is a \(kind), not a regular file"
            case .tooLarge(let size, let limit): "it is \(size) bytes, over max_file_size (\(limit) bytes)"
            case .takesTooMuchDisk(let allocated, let limit): "it takes \(allocated) bytes of disk, over max_file_allocation (\(limit) bytes)"
            case .unreadable(let code): "it cannot be read: \(Errno(rawValue: code))"
            }
        }
    }

    package let descriptor: Int32
    /// What `fstat` said of ``descriptor`` when it was opened, whole: delivery checks its copy
    /// against it and finds the source in its inbox by it, so nothing of it is made up later.
    package let status: FileStatus
    /// The first bytes, for content typing.
    package let head: [UInt8]

    package var device: UInt64 { status.device }
    package var inode: UInt64 { status.inode }
    package var size: Int64 { status.size }
    /// Bytes of disk the file takes (`st_blocks` × 512): less than ``size`` when it has holes.
    package var allocatedBytes: Int64 { status.allocatedBytes ?? status.size }
    package var modificationTimeNanoseconds: Int64 { status.modificationTimeNanoseconds }
    package var ownerUID: UInt32 { status.userID }
    package var linkCount: UInt64 { status.linkCount }

    /// Opens `name` inside the folder `directory` (a descriptor) with `O_NOFOLLOW|O_NONBLOCK`.
    ///
    /// `O_NONBLOCK` means a FIFO dropped in an inbox never blocks the open; it is refused after
    /// `fstat`. The descriptor keeps the flag, which regular files ignore. The caller owns the
    /// returned descriptor and must close it. A file over `maxSize` bytes, or taking more than
    /// `maxAllocation` bytes of disk, is refused.
    package static func open(name: [UInt8], in directory: Int32, maxSize: Int64, maxAllocation: Int64 = .max,
                             headLength: Int = 4096) -> Result<IntakeFile, Refusal> {
        // A name from inotify or readdir is one component; anything else names nothing here.
        guard let component = FilePath.Component(platformBytes: name) else { return .failure(.vanished) }
        let file: FileDescriptor
        do throws(Errno) {
            file = try FileDescriptor(rawValue: directory).open(component, .readOnly, options: [.nonBlocking, .noControllingTerminal])
        } catch .noSuchFileOrDirectory {
            return .failure(.vanished)
        } catch .tooManySymbolicLinkLevels {
            return .failure(.symbolicLink)
        } catch .noSuchAddressOrDevice {
            return .failure(.notRegularFile("socket"))
        } catch {
            return .failure(.unreadable(errno: error.rawValue))
        }
        let info: FileStatus
        do throws(Errno) {
            info = try file.status()
        } catch {
            file.closeIgnoringErrors()
            return .failure(.unreadable(errno: error.rawValue))
        }
        if let refusal: Refusal = refusal(of: info, maxSize: maxSize, maxAllocation: maxAllocation) {
            file.closeIgnoringErrors()
            return .failure(refusal)
        }
        // O_NONBLOCK stays: it changes nothing for reads of a regular file (only pipes, sockets
        // and devices honour it), and clearing it cost two system calls a file in a burst.
        switch reading(file.rawValue, info, headLength: headLength) {
        case .success(let opened): return .success(opened)
        case .failure(let error):
            file.closeIgnoringErrors()
            return .failure(.unreadable(errno: error.rawValue))
        }
    }

    /// The file open on `descriptor` (described by `info`) with its first `headLength` bytes, read
    /// from offset 0 with pread whatever its position; on failure the errno. The descriptor stays
    /// open either way: the caller owns it.
    static func reading(_ descriptor: Int32, _ info: FileStatus, headLength: Int) -> Result<IntakeFile, Errno> {
        var head = [UInt8](repeating: 0, count: min(headLength, max(Int(info.size), 0)))
        var filled = 0
        while filled < head.count {
            let result = head.withUnsafeMutableBytes { buffer in
                Result { () throws(Errno) -> Int in
                    try FileDescriptor(rawValue: descriptor).read(
                        into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]), atOffset: Int64(filled))
                }
            }
            let count: Int
            switch result {
            case .success(let read): count = read
            case .failure(let error): return .failure(error)
            }
            if count == 0 { break }
            filled += count
        }
        head.removeSubrange(filled...)
        return .success(IntakeFile(descriptor: descriptor, status: info, head: head))
    }

    /// Closes ``descriptor`` once the file is delivered or given up on. Nothing was written
    /// through it, and a close that fails has released the descriptor all the same (close(2) on
    /// Linux), so there is nothing to report.
    package func closeDescriptor() {
        FileDescriptor(rawValue: descriptor).closeIgnoringErrors()
    }

    /// The same file without its head: a document in flight keeps its descriptor and status, not
    /// the bytes it was typed from (up to 4 KiB each, some 3 MiB of a burst's peak heap).
    var withoutHead: IntakeFile {
        IntakeFile(descriptor: descriptor, status: status, head: [])
    }

    static func kindName(_ type: FileType) -> String {
        switch type {
        case .fifo: "FIFO"
        case .socket: "socket"
        case .characterSpecial: "character device"
        case .blockSpecial: "block device"
        case .symbolicLink: "symbolic link"
        default: "special file"
        }
    }
}
