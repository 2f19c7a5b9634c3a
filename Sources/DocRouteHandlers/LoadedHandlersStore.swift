import Foundation

/// Which manifest file each handler was loaded from, as docrouted last loaded them
/// (`<state_directory>/loaded-handlers.json`).
///
/// Of two manifests with one bundle identifier, the one loaded before keeps serving
/// (``HandlerRegistry/init(manifests:failures:typeIssues:previouslyLoaded:)``). The daemon knows
/// that from its own registry at a reload; this file carries it across a restart, and lets
/// `docroutectl handlers` and `docrouted --check` tell which file the daemon refuses. The daemon
/// writes it with its one atomic writer (`LoadedHandlersStore.save(_:)` in DocRouteConfiguration).
package struct LoadedHandlersStore: Sendable {
    package let path: String

    /// The file's name in the state directory.
    package static let fileName = "loaded-handlers.json"

    package init(stateDirectory: String) {
        self.path = (stateDirectory as NSString).appendingPathComponent(Self.fileName)
    }

    /// Lower-cased bundle identifier to manifest file; empty when the file is missing or cannot be
    /// read, which only means that no manifest counts as loaded before.
    package func load() -> [String: String] {
        guard let data = FileManager.default.contents(atPath: path),
              let files = try? JSONDecoder().decode([String: String].self, from: data)
        else { return [:] }
        return Dictionary(files.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    /// The file's bytes: pretty-printed JSON with sorted keys, for a person to read.
    package func encoded(_ files: [String: String]) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(files))
    }
}
