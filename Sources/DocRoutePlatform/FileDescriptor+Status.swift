import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension FileDescriptor {
    /// `fstat(2)` of the open file.
    package func status() throws(Errno) -> FileStatus {
        FileStatus(try stat())
    }

    /// `fstatat(2)` of one name in this folder, never following a symbolic link; `nil` if there
    /// is no such name.
    package func status(of name: FilePath.Component) throws(Errno) -> FileStatus? {
        try stat(of: name).map(FileStatus.init)
    }

    /// `fstatat(2)` of one name in this folder as swift-system's whole `Stat` (for the times
    /// ``FileStatus`` leaves out), never following a symbolic link; `nil` if there is no such name.
    package func stat(of name: FilePath.Component) throws(Errno) -> Stat? {
        do throws(Errno) {
            return try FilePath(root: nil, [name]).stat(relativeTo: self, flags: .symlinkNoFollow)
        } catch .noSuchFileOrDirectory {
            return nil
        }
    }
}
