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
    ///
    /// `previouslyLoaded` is the ``HandlerRegistry/loadedFiles`` of the registry this one replaces:
    /// of two manifests with one bundle identifier, the one loaded before keeps serving.
    /// `userExists` answers whether this host has a user of that name; a manifest whose
    /// `DocRouteUser` names none fails (its copies would otherwise go to root), so the caller that
    /// can read the user database passes it. A numeric uid needs no entry and is not asked about.
    public func load(logger: Logger, previouslyLoaded: [String: String] = [:], userExists: ((String) -> Bool)? = nil) -> HandlerRegistry {
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
            case .success(let manifest):
                if case .name(let name) = manifest.user, let userExists, !userExists(name) {
                    failures.append(ManifestFailure(file: file, bundleIdentifier: manifest.bundleIdentifier, error: Self.unknownUser(name, file: file)))
                } else {
                    manifests.append(manifest)
                }
            case .failure(let error): failures.append(ManifestFailure(file: file, error: error))
            }
        }
        let registry = HandlerRegistry(manifests: manifests, failures: failures, typeIssues: typeIssues, previouslyLoaded: previouslyLoaded)
        for failure in registry.failures {
            let metadata: Logger.Metadata = [
                "path": "\(failure.file)", "key-path": "\(failure.error.inputKey ?? "")", "code": "\(failure.error.code.rawValue)",
            ]
            // A duplicate refused while the handler it copies keeps serving loses no document.
            if failure.error.code == .duplicateIdentifier, let identifier = failure.bundleIdentifier, registry.handler(for: identifier) != nil {
                logger.warning("handler manifest refused: \(failure.error.message)", metadata: metadata)
            } else {
                logger.error("handler manifest not loaded: \(failure.error.message)", metadata: metadata)
            }
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

    /// The failure of a manifest whose `DocRouteUser` names no user of this host.
    static func unknownUser(_ name: String, file: String) -> ManifestError {
        ManifestError(
            code: .unknownUser, inputFile: file, inputKey: "DocRouteUser",
            message: "'\(name)' is not a user on this host, so this handler is not loaded (its documents would otherwise belong to root); "
                + "create the user (useradd --system \(name), or a systemd-sysusers entry), or name an existing user or a numeric uid in DocRouteUser, "
                + "then reload docrouted (systemctl reload docroute)")
    }
}
