import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// Replaces a whole file so that a reader sees the old content or the new, never a part: a
/// temporary file in the same folder, synced, then renamed over the name, then the folder synced.
///
/// This is how a node-exporter textfile collector expects `.prom` files to be written; the
/// temporary name (`.NAME.tmp`) does not end in `.prom`, so the collector never reads it.
package enum AtomicFile {
    /// Writes `bytes` to `path`, replacing what is there, with permissions `mode` (umask ignored, so
    /// a collector running as another user can read it).
    package static func replace(_ path: FilePath, with bytes: [UInt8], mode: mode_t = 0o644) throws {
        guard let name = path.lastComponent else {
            throw DeliveryError(code: .invalidName, message: "\(path.string) names no file; give a file path")
        }
        let folderPath = path.removingLastComponent()
        let folder = try SystemCall.openDirectory(folderPath.isEmpty ? "." : folderPath)
        defer { SystemCall.close(folder) }
        guard let temporary = FilePath.Component("." + name.string + ".tmp") else {
            throw DeliveryError(code: .invalidName, message: "\(path.string): no temporary name can be made from it")
        }
        let temporaryPath = folderPath.appending(temporary).string
        // A temporary left by a crash is ours to replace.
        try SystemCall.unlink(temporary, in: folder, describing: temporaryPath)
        let file = try SystemCall.open(temporary, in: folder, flags: O_WRONLY | O_CREAT | O_EXCL, permissions: mode, describing: temporaryPath)
        do {
            try bytes.withUnsafeBytes { try SystemCall.writeAll(file, $0, describing: temporaryPath) }
            try SystemCall.changeMode(file, mode, describing: temporaryPath)
            try SystemCall.fsync(file, describing: temporaryPath)
            SystemCall.close(file)
        } catch {
            SystemCall.close(file)
            _ = try? SystemCall.unlink(temporary, in: folder, describing: temporaryPath)
            throw error
        }
        do {
            try SystemCall.rename(temporary, in: folder, to: name, in: folder, describing: path.string)
        } catch {
            _ = try? SystemCall.unlink(temporary, in: folder, describing: temporaryPath)
            throw error
        }
        try SystemCall.fsync(folder, describing: folderPath.string)
    }
}
