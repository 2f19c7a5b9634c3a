import DocRouteTypes
import Foundation
import Logging

/// Loads every `*.plist` in a handlers directory into a ``HandlerRegistry``.
///
/// One bad manifest never takes the others down: it becomes a ``ManifestFailure`` and is logged
/// as an error; a manifest read with warnings loads, and each warning is logged at warning level.
/// Files are read in name order, so the outcome never depends on directory listing order.
public struct HandlerDirectory: Sendable {
    public let path: String

    public init(path: String) {
        self.path = path
    }

    /// Reads the directory. A missing directory gives an empty registry and a logged warning.
    public func load(logger: Logger) -> HandlerRegistry {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: path)
        } catch {
            logger.warning("handlers directory cannot be read; no handlers are registered", metadata: ["path": "\(path)", "error": "\(error.localizedDescription)"])
            return HandlerRegistry(manifests: [])
        }
        var manifests: [HandlerManifest] = []
        var failures: [ManifestFailure] = []
        var typeIssues: [TypeCatalogIssue] = []
        for name in names.sorted() where name.hasSuffix(".plist") && !name.hasPrefix(".") {
            let file = (path as NSString).appendingPathComponent(name)
            guard let data = FileManager.default.contents(atPath: file) else {
                failures.append(ManifestFailure(file: file, error: ManifestError(code: .unreadable, inputFile: file, message: "cannot be read (permissions?)")))
                continue
            }
            switch ManifestReader.read(data: data, file: file, typeIssues: &typeIssues) {
            case .success(let manifest): manifests.append(manifest)
            case .failure(let error): failures.append(ManifestFailure(file: file, error: error))
            }
        }
        let registry = HandlerRegistry(manifests: manifests, failures: failures, typeIssues: typeIssues)
        for failure in registry.failures {
            logger.error("handler manifest not loaded: \(failure.error.message)", metadata: [
                "path": "\(failure.file)", "key-path": "\(failure.error.inputKey ?? "")", "code": "\(failure.error.code.rawValue)",
            ])
        }
        // The manifest's own warnings and its type declarations' problems alike: each was read
        // otherwise than written, and the author fixes both in the same file.
        for warning in registry.warnings {
            logger.warning("handler manifest read with a warning: \(warning.message)", metadata: [
                "path": "\(warning.file)", "key-path": "\(warning.keyPath)", "code": "\(warning.code.rawValue)",
            ])
        }
        logger.info("handlers loaded", metadata: [
            "count": "\(registry.handlers.count)", "failed": "\(registry.failures.count)",
            "warnings": "\(registry.warnings.count)", "path": "\(path)",
        ])
        return registry
    }
}
