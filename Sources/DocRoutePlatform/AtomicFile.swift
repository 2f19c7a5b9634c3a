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
        let folderToOpen = folderPath.isEmpty ? "." : folderPath
        let folder = try DeliveryError.performing("open folder", folderToOpen.string) { try FileDescriptor.openDirectory(atPath: folderToOpen) }
        defer { folder.closeIgnoringErrors() }
        guard let temporary = FilePath.Component("." + name.string + ".tmp") else {
            throw DeliveryError(code: .invalidName, message: "\(path.string): no temporary name can be made from it")
        }
        let temporaryPath = folderPath.appending(temporary).string
        // A temporary left by a crash is ours to replace.
        try DeliveryError.performing("remove", temporaryPath) { try folder.unlink(temporary) }
        let file = try DeliveryError.performing("open", temporaryPath) { try folder.open(temporary, flags: O_WRONLY | O_CREAT | O_EXCL, permissions: mode) }
        do {
            try bytes.withUnsafeBytes { buffer in try DeliveryError.performing("write", temporaryPath) { try file.writeAll(from: buffer) } }
            try DeliveryError.performing("change mode of", temporaryPath) { try file.changeMode(mode) }
            try DeliveryError.performing("sync", temporaryPath) { try file.sync() }
            file.closeIgnoringErrors()
        } catch {
            file.closeIgnoringErrors()
            _ = try? DeliveryError.performing("remove", temporaryPath) { try folder.unlink(temporary) }
            throw error
        }
        do {
            try DeliveryError.performing("rename", path.string) { try folder.rename(temporary, to: name, in: folder) }
        } catch {
            _ = try? DeliveryError.performing("remove", temporaryPath) { try folder.unlink(temporary) }
            throw error
        }
        try DeliveryError.performing("sync", folderPath.string) { try folder.sync() }
    }
}
