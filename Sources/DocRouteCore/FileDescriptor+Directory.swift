import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One entry of a folder, as `readdir(3)` gives it.
public struct DirectoryEntry: Sendable, Hashable {
    /// The name; its bytes need not be UTF-8.
    public var name: FilePath.Component
    /// A folder (by `d_type`, or by `fstatat` without following a link where the file system
    /// leaves `d_type` unknown). A symbolic link to a folder is not one.
    public var isDirectory: Bool

    /// Creates an entry.
    public init(name: FilePath.Component, isDirectory: Bool) {
        self.name = name
        self.isDirectory = isDirectory
    }

    /// The raw bytes of the name, without the terminating NUL.
    public var nameBytes: [UInt8] {
        name.withPlatformString { cName in
            UnsafeRawBufferPointer(start: cName, count: strlen(cName)).map { $0 }
        }
    }
}

extension FilePath.Component {
    /// The name made of these raw bytes (no terminating NUL; they need not be UTF-8); nil for an
    /// empty name, or one holding a `/` or a NUL.
    public init?(platformBytes bytes: [UInt8]) {
        guard !bytes.isEmpty, !bytes.contains(0) else { return nil }
        let terminated = bytes.map { CChar(bitPattern: $0) } + [0]
        guard let component = terminated.withUnsafeBufferPointer({ FilePath.Component(platformString: $0.baseAddress!) }) else { return nil }
        self = component
    }
}

extension FileDescriptor {
    /// The entries of this folder, without `.` and `..`, read through a new descriptor of the same
    /// folder (`openat(self, ".")`), so this descriptor and its position stay untouched.
    ///
    /// A failure to open or read the folder throws: a listing cut short is never passed off as a
    /// whole one. An entry removed while it is listed, and whose type `fstatat` must tell, is left out.
    public func directoryEntries() throws(Errno) -> [DirectoryEntry] {
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
    public func directoryNames() throws(Errno) -> [FilePath.Component] {
        try directoryEntries().map(\.name)
    }
}
