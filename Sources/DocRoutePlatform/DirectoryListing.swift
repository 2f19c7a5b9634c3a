#if canImport(Glibc)
import Glibc
#endif

/// The entries of a folder, read through a descriptor so the folder cannot be swapped underneath.
package struct DirectoryListing: Sendable {
    package struct Entry: Sendable, Hashable {
        /// Raw bytes: names need not be UTF-8.
        package var name: [UInt8]
        package var isDirectory: Bool
    }

    /// Lists `directory` (a descriptor; it stays open and owned by the caller). `.` and `..` are left out.
    package static func entries(of directory: Int32) -> [Entry] {
        let copy = dup(directory)
        guard copy >= 0, let stream = fdopendir(copy) else {
            if copy >= 0 { close(copy) }
            return []
        }
        defer { closedir(stream) }
        rewinddir(stream)
        var result: [Entry] = []
        while let entry = readdir(stream) {
            var name = withUnsafeBytes(of: entry.pointee.d_name) { raw -> [UInt8] in
                Array(raw.prefix { $0 != 0 })
            }
            if name == [0x2E] || name == [0x2E, 0x2E] { continue }
            var isDirectory = entry.pointee.d_type == UInt8(DT_DIR)
            if entry.pointee.d_type == UInt8(DT_UNKNOWN) {
                var info = stat()
                let ok = name.withUnsafeMutableBufferPointer { buffer -> Bool in
                    var terminated = Array(buffer)
                    terminated.append(0)
                    return terminated.withUnsafeBufferPointer { pointer in
                        pointer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: pointer.count) {
                            fstatat(directory, $0, &info, AT_SYMLINK_NOFOLLOW) == 0
                        }
                    }
                }
                isDirectory = ok && (info.st_mode & S_IFMT) == S_IFDIR
            }
            result.append(Entry(name: name, isDirectory: isDirectory))
            name = []
        }
        return result
    }
}
