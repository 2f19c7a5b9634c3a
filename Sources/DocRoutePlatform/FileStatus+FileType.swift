import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension FileStatus {
    /// The file's type (`st_mode & S_IFMT`): regular file, folder, symbolic link, FIFO, socket,
    /// character or block device.
    package var fileType: FileType {
        FileType(rawValue: mode_t(mode) & S_IFMT)
    }
}
