import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension FileDescriptor {
    /// The entries of this folder, without `.` and `..` (see ``forEachDirectoryEntry(_:)``).
    package func directoryEntries() throws(Errno) -> [DirectoryEntry] {
        var entries: [DirectoryEntry] = []
        try forEachDirectoryEntry { entries.append($0); return true }
        return entries
    }

    /// Hands the entries of this folder, without `.` and `..`, to `body` as they are read, until it
    /// returns false; read through a new descriptor of the same folder (`openat(self, ".")`), so
    /// this descriptor and its position stay untouched.
    ///
    /// A failure to open or read the folder throws: a listing cut short is never passed off as a
    /// whole one. An entry removed while it is listed, and whose type `fstatat` must tell, is left out.
    package func forEachDirectoryEntry(_ body: (DirectoryEntry) -> Bool) throws(Errno) {
        let reopened = try Errno.retryingOnInterrupt { FaultPoint.call(.open) { Glibc.openat(self.rawValue, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) } }
        guard let stream = Glibc.fdopendir(reopened) else {
            let error = Errno(rawValue: Glibc.errno)
            _ = Glibc.close(reopened)
            throw error
        }
        defer { Glibc.closedir(stream) }
        while true {
            Glibc.errno = 0
            guard let entry = Glibc.readdir(stream) else {
                if Glibc.errno != 0 { throw Errno(rawValue: Glibc.errno) }
                return
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw -> FilePath.Component? in
                FilePath.Component(platformString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            // `.` and `..` are not names of anything in the folder.
            guard let name, name.kind == .regular else { continue }
            let type = entry.pointee.d_type
            let listed: DirectoryEntry
            if type == UInt8(DT_UNKNOWN) {
                // Some file systems (older XFS, some network ones) do not fill in d_type.
                guard let status = try self.status(of: name) else { continue }
                listed = DirectoryEntry(name: name, isDirectory: status.isDirectory)
            } else {
                listed = DirectoryEntry(name: name, isDirectory: type == UInt8(DT_DIR))
            }
            guard body(listed) else { return }
        }
    }

    /// The names in this folder, without `.` and `..` (see ``directoryEntries()``).
    package func directoryNames() throws(Errno) -> [FilePath.Component] {
        try directoryEntries().map(\.name)
    }
}
