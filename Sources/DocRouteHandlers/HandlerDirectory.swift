import DocRouteTypes
import Foundation
import Logging

/// Loads every `*.plist` in a handlers directory into a ``HandlerRegistry``.
///
/// One bad manifest never takes the others down: it becomes a ``ManifestFailure`` and is logged.
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
                failures.append(ManifestFailure(file: file, error: ManifestError(code: .unreadable, file: file, message: "cannot be read (permissions?)")))
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
                "path": "\(failure.file)", "key-path": "\(failure.error.keyPath)", "code": "\(failure.error.code.rawValue)",
            ])
        }
        for issue in registry.typeIssues {
            logger.warning("type declaration problem: \(issue.message)", metadata: [
                "path": "\(issue.file ?? "")", "key-path": "\(issue.keyPath ?? "")", "code": "\(issue.code.rawValue)",
            ])
        }
        logger.info("handlers loaded", metadata: ["count": "\(registry.handlers.count)", "failed": "\(registry.failures.count)", "path": "\(path)"])
        return registry
    }
}
