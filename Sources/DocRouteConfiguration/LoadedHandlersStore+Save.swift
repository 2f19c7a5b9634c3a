import DocRouteHandlers
import DocRoutePlatform
import Foundation
import SystemPackage

extension LoadedHandlersStore {
    /// Replaces the record with the one atomic writer (``AtomicFile``), unless it says this already.
    package func save(_ files: [String: String]) throws {
        guard load() != files else { return }
        try AtomicFile.replace(FilePath(path), with: try encoded(files), mode: 0o644)
    }
}
