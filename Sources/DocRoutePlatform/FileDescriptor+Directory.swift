import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension FileDescriptor {
    /// The entries of this folder, without `.` and `..`, read through a new descriptor of the same
    /// folder (`openat(self, ".")`), so this descriptor and its position stay untouched.
    ///
    /// A failure to open or read the folder throws: a listing cut short is never passed off as a
    /// whole one. An entry removed while it is listed, and whose type `fstatat` must tell, is left out.
    package func directoryEntries() throws(Errno) -> [DirectoryEntry] {
        let reopened = try Errno.retryingOnInterrupt { Glibc.openat(self.rawValue, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard let stream = Glibc.fdopendir(reopened) else {
            let error = Errno(rawValue: Glibc.errno)
            _ = Glibc.close(reopened)
            throw error
        }
        defer { Glibc.closedir(stream) }
        var entries: [DirectoryEntry] = []
        while true {
            Glibc.errno = 0
            guard let entry = Glibc.readdir(stream) else {
                if Glibc.errno != 0 { throw Errno(rawValue: Glibc.errno) }
                return entries
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw -> FilePath.Component? in
                FilePath.Component(platformString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            // `.` and `..` are not names of anything in the folder.
            guard let name, name.kind == .regular else { continue }
            let type = entry.pointee.d_type
            if type == UInt8(DT_UNKNOWN) {
                // Some file systems (older XFS, some network ones) do not fill in d_type.
                guard let status = try self.status(of: name) else { continue }
                entries.append(DirectoryEntry(name: name, isDirectory: status.isDirectory))
            } else {
                entries.append(DirectoryEntry(name: name, isDirectory: type == UInt8(DT_DIR)))
            }
        }
    }

    /// The names in this folder, without `.` and `..` (see ``directoryEntries()``).
    package func directoryNames() throws(Errno) -> [FilePath.Component] {
        try directoryEntries().map(\.name)
    }
}
