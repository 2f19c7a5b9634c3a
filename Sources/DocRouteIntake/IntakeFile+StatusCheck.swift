import DocRoutePlatform

extension IntakeFile {
    /// The refusals a file earns by its `fstat` alone, whichever way it came in (a name in an
    /// inbox, a path a client named, a descriptor a client passed); each way words them for
    /// its own reader. The refusal enums' cases of these names are the witnesses.
    protocol StatusRefusal {
        /// A folder.
        static var directory: Self { get }
        /// A FIFO, socket or device, named by `kind`.
        static func notRegularFile(_ kind: String) -> Self
        /// Bigger than `max_file_size`.
        static func tooLarge(size: Int64, limit: Int64) -> Self
        /// Its copy would take more disk than `max_file_allocation`.
        static func takesTooMuchDisk(allocated: Int64, limit: Int64) -> Self
    }

    /// Why a file described by `info` is not taken in, before anything of it is read: not a
    /// regular file, over `maxSize` bytes, or taking more than `maxAllocation` bytes of disk; nil
    /// when it passes.
    static func refusal<Refusal: StatusRefusal>(of info: FileStatus, maxSize: Int64, maxAllocation: Int64) -> Refusal? {
        guard info.isRegularFile else {
            return info.isDirectory ? .directory : .notRegularFile(kindName(info.fileType))
        }
        guard info.size <= maxSize else {
            return .tooLarge(size: info.size, limit: maxSize)
        }
        // What its copy takes: no more than its size (a block allocated past the end is not
        // copied), and with its holes kept about what it takes itself.
        if let allocated = info.allocatedBytes.map({ min($0, info.size) }), allocated > maxAllocation {
            return .takesTooMuchDisk(allocated: allocated, limit: maxAllocation)
        }
        return nil
    }
}

extension IntakeFile.Refusal: IntakeFile.StatusRefusal {}

extension IntakeFile.DescriptorRefusal: IntakeFile.StatusRefusal {
    /// A passed descriptor of a folder is refused as any other file that is not a document.
    static var directory: Self { .notRegularFile("folder") }
}
