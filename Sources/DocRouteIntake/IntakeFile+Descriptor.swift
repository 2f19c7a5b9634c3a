import DocRoutePlatform
import CDocRouteShim
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

extension IntakeFile {
    /// Why a passed descriptor is refused.
    package enum DescriptorRefusal: Error, Sendable, Equatable, CustomStringConvertible {
        /// Opened with `O_WRONLY` or `O_PATH`: the client could not read the file through it.
        case notOpenForReading
        /// A folder, FIFO, socket or device.
        case notRegularFile(String)
        /// Bigger than `max_file_size`.
        case tooLarge(size: Int64, limit: Int64)
        /// `fstat` or the first read failed.
        case unreadable(errno: Int32)

        package var description: String {
            switch self {
            case .notOpenForReading: "the descriptor is not open for reading; open the file with O_RDONLY and pass that"
            case .notRegularFile(let kind): "the descriptor is a \(kind), not a regular file; only documents can be opened"
            case .tooLarge(let size, let limit): "the file is \(size) bytes, over max_file_size (\(limit) bytes)"
            case .unreadable(let code): "the descriptor cannot be read: \(String(cString: strerror(code)))"
            }
        }
    }

    /// Takes a descriptor a client passed (`open-descriptor`): checks it is a regular file opened
    /// for reading, and reads its head with `pread`, never by name and without moving the
    /// client's file offset. On success the returned file owns `descriptor`; on failure the caller
    /// still does.
    package static func adopt(descriptor: Int32, maxSize: Int64, headLength: Int = 4096) -> Result<IntakeFile, DescriptorRefusal> {
        let file = FileDescriptor(rawValue: descriptor)
        let flags: CInt, info: FileStatus
        do throws(Errno) {
            flags = try file.statusFlags()
            // O_PATH descriptors permit fstat but no read: the kernel never checked read access.
            guard flags & docroute_o_path == 0, flags & O_ACCMODE != O_WRONLY else { return .failure(.notOpenForReading) }
            info = try file.status()
        } catch {
            return .failure(.unreadable(errno: error.rawValue))
        }
        guard info.isRegularFile else {
            return .failure(.notRegularFile(info.isDirectory ? "folder" : kindName(mode_t(info.mode))))
        }
        guard info.size <= maxSize else {
            return .failure(.tooLarge(size: info.size, limit: maxSize))
        }
        // The client's O_NONBLOCK would not change reads of a regular file; nothing to undo.
        return reading(descriptor, info, headLength: headLength).mapError { .unreadable(errno: $0.rawValue) }
    }
}
