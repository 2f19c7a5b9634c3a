import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// `SEEK_DATA` and `SEEK_HOLE` (Linux's values, the same on every architecture): Glibc's module
// leaves them out, since they are defined under _GNU_SOURCE only.
private let seekData: CInt = 3
private let seekHole: CInt = 4

extension FileDescriptor {
    /// `lseek(SEEK_DATA)`: where the first data at or after `offset` starts; nil when there is
    /// none up to the end (`ENXIO`). A file system that cannot tell data from holes reports the
    /// whole file as data.
    package func nextData(from offset: Int64) throws(Errno) -> Int64? {
        let result = Errno.result { Glibc.lseek(rawValue, off_t(offset), seekData) }
        switch result {
        case .success(let position): return Int64(position)
        case .failure(.noSuchAddressOrDevice): return nil
        case .failure(let errno): throw errno
        }
    }

    /// `lseek(SEEK_HOLE)`: where the first hole at or after `offset` starts (the end of the file
    /// counts as one).
    package func nextHole(from offset: Int64) throws(Errno) -> Int64 {
        let position = try Errno.result { Glibc.lseek(rawValue, off_t(offset), seekHole) }.get()
        return Int64(position)
    }
}
