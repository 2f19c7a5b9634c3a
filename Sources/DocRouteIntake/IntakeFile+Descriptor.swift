import DocRoutePlatform
import SystemPackage

extension IntakeFile {
    /// Why a passed descriptor is refused.
    package enum DescriptorRefusal: Error, Sendable, Equatable, CustomStringConvertible {
        /// Opened with `O_WRONLY` or `O_PATH`: the client could not read the file through it.
        case notOpenForReading
        /// A folder, FIFO, socket or device.
        case notRegularFile(String)
        /// Bigger than `max_file_size`.
        case tooLarge(size: Int64, limit: Int64)
        /// Its copy would take more disk than `max_file_allocation` (the smaller of its size and its allocated blocks).
        case takesTooMuchDisk(allocated: Int64, limit: Int64)
        /// `fstat` or the first read failed.
        case unreadable(errno: Int32)

        package var description: String {
            switch self {
            case .notOpenForReading: "the descriptor is not open for reading; open the file with O_RDONLY and pass that"
            case .notRegularFile(let kind): "the descriptor is a \(kind), not a regular file; only documents can be opened"
            case .tooLarge(let size, let limit): "the file is \(size) bytes, over max_file_size (\(limit) bytes)"
            case .takesTooMuchDisk(let allocated, let limit): "the file takes \(allocated) bytes of disk, over max_file_allocation (\(limit) bytes)"
            case .unreadable(let code): "the descriptor cannot be read: \(Errno(rawValue: code))"
            }
        }
    }

    /// Takes a descriptor a client passed (`open-descriptor`): checks it is a regular file opened
    /// for reading, and reads its head with `pread`, never by name and without moving the
    /// client's file offset. On success the returned file owns `descriptor`; on failure the caller
    /// still does. A file over `maxSize` bytes, or taking more than `maxAllocation` bytes of disk,
    /// is refused.
    package static func adopt(descriptor: Int32, maxSize: Int64, maxAllocation: Int64 = .max,
                              headLength: Int = 4096) -> Result<IntakeFile, DescriptorRefusal> {
        let file = FileDescriptor(rawValue: descriptor)
        let info: FileStatus
        do throws(Errno) {
            // O_PATH descriptors permit fstat but no read: the kernel never checked read access.
            guard try file.isOpenForReading() else { return .failure(.notOpenForReading) }
            info = try file.status()
        } catch {
            return .failure(.unreadable(errno: error.rawValue))
        }
        if let refusal: DescriptorRefusal = refusal(of: info, maxSize: maxSize, maxAllocation: maxAllocation) {
            return .failure(refusal)
        }
        // The client's O_NONBLOCK would not change reads of a regular file; nothing to undo.
        return reading(descriptor, info, headLength: headLength).mapError { .unreadable(errno: $0.rawValue) }
    }
}
