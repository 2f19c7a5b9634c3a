import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Sparse files: a size with only a few ranges written, the rest holes, as `truncate -s` and a few
/// writes make them.
public enum SparseFile {
    /// Creates `path` of `size` bytes holding `pieces` (offset and bytes) and holes elsewhere.
    public static func create(_ path: String, size: Int64, pieces: [(offset: Int64, bytes: [UInt8])]) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw TestSupportError("create \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        guard ftruncate(descriptor, off_t(size)) == 0 else { throw TestSupportError("truncate \(path): \(String(cString: strerror(errno)))") }
        for piece in pieces {
            let written = piece.bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, off_t(piece.offset)) }
            guard written == piece.bytes.count else { throw TestSupportError("write \(path): \(String(cString: strerror(errno)))") }
        }
        guard fsync(descriptor) == 0 else { throw TestSupportError("sync \(path): \(String(cString: strerror(errno)))") }
    }

    /// A file of `size` bytes with three 4 KiB pieces of data (at the start, near the middle, at
    /// the end) and holes elsewhere; the pieces' bytes differ so a copy that moved one shows it.
    public static func createWithThreePieces(_ path: String, size: Int64) throws {
        try create(path, size: size, pieces: [
            (0, Array(repeating: 0x41, count: 4096)),
            (size / 2 + 123, Array(repeating: 0x42, count: 4096)),
            (size - 4096, Array(repeating: 0x43, count: 4096)),
        ])
    }

    /// Bytes of disk the file at `path` takes (`st_blocks` × 512).
    public static func allocatedBytes(_ path: String) -> Int64? {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        return Int64(status.st_blocks) * 512
    }

    /// Whether the files at `first` and `second` hold the same bytes, read 1 MiB at a time.
    public static func sameBytes(_ first: String, _ second: String) -> Bool {
        guard let one = FileHandle(forReadingAtPath: first), let two = FileHandle(forReadingAtPath: second) else { return false }
        defer { try? one.close(); try? two.close() }
        while true {
            let a = one.readData(ofLength: 1 << 20)
            let b = two.readData(ofLength: 1 << 20)
            if a != b { return false }
            if a.isEmpty { return true }
        }
    }
}
