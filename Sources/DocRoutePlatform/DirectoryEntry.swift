import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One entry of a folder, as `readdir(3)` gives it.
package struct DirectoryEntry: Sendable, Hashable {
    /// The name; its bytes need not be UTF-8.
    package var name: FilePath.Component
    /// A folder (by `d_type`, or by `fstatat` without following a link where the file system
    /// leaves `d_type` unknown). A symbolic link to a folder is not one.
    package var isDirectory: Bool

    /// Creates an entry.
    package init(name: FilePath.Component, isDirectory: Bool) {
        self.name = name
        self.isDirectory = isDirectory
    }

    /// The raw bytes of the name, without the terminating NUL.
    package var nameBytes: [UInt8] {
        name.withPlatformString { cName in
            UnsafeRawBufferPointer(start: cName, count: strlen(cName)).map { $0 }
        }
    }
}
