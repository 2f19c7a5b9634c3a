import DocRouteHandlers
import DocRoutePlatform
import Foundation
import SystemPackage

extension AdminDefaultsStore {
    /// Replaces the stored defaults with the one atomic writer (``AtomicFile``): a reader, the
    /// daemon included, sees the old file or the new one, never a part. Creates the state
    /// directory if it is not there yet.
    package func save(_ defaults: AdminDefaults) throws {
        let bytes = try encoded(defaults)
        let file = FilePath(path)
        try FileManager.default.createDirectory(atPath: file.removingLastComponent().string, withIntermediateDirectories: true)
        try AtomicFile.replace(file, with: bytes, mode: 0o644)
    }
}
