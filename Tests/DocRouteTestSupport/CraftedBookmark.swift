import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Bookmark data as an attacker writes it by hand: `DRBM`, the format's version byte, then the
/// JSON naming any container and any path, with the identities `lstat` shows of them now.
public enum CraftedBookmark {
    /// The data naming `path` in `container`, with `digest` ("" for none) and format `version`.
    /// - Throws: when `container` or the file cannot be looked up.
    public static func data(container: String, path: String, digest: String = "", version: UInt8) throws -> Data {
        var folder = stat()
        var file = stat()
        let filePath = (container.hasSuffix("/") ? container : container + "/") + path
        guard lstat(container, &folder) == 0, lstat(filePath, &file) == 0 else {
            throw TestSupportError("cannot look up \(container) or \(filePath): \(String(cString: strerror(errno)))")
        }
        let json = """
            {"container":"\(container)","containerDevice":\(UInt64(folder.st_dev)),"containerInode":\(UInt64(folder.st_ino)),\
            "device":\(UInt64(file.st_dev)),"digest":"\(digest)","inode":\(UInt64(file.st_ino)),"modified":0,"path":"\(path)","size":\(Int64(file.st_size))}
            """
        return Data(Array("DRBM".utf8) + [version]) + Data(json.utf8)
    }
}
