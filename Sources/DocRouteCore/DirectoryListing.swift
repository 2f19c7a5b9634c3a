#if canImport(Glibc)
import Glibc
#endif

/// The entries of a folder, read through a descriptor so the folder cannot be swapped underneath.
public struct DirectoryListing: Sendable {
    public struct Entry: Sendable, Hashable {
        /// Raw bytes: names need not be UTF-8.
        public var name: [UInt8]
        public var isDirectory: Bool
    }

    /// Lists `directory` (a descriptor; it stays open and owned by the caller). `.` and `..` are left out.
    public static func entries(of directory: Int32) -> [Entry] {
        var result: [Entry] = []
        forEachEntry(of: directory) { result.append($0); return true }
        return result
    }

    /// Hands each entry of `directory` to `body` as it is read, until `body` returns false: a
    /// folder of 100,000 files is never held in memory as a whole (a listing of them all took
    /// about 8 MiB).
    public static func forEachEntry(of directory: Int32, _ body: (Entry) -> Bool) {
        let copy = dup(directory)
        guard copy >= 0, let stream = fdopendir(copy) else {
            if copy >= 0 { close(copy) }
            return
        }
        defer { closedir(stream) }
        rewinddir(stream)
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
            guard body(Entry(name: name, isDirectory: isDirectory)) else { return }
            name = []
        }
    }
}
