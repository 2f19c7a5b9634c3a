import DocRouteErrors
import Foundation

/// Where ``AdminDefaults`` are kept (`<state_directory>/defaults.json`), and their file's bytes.
///
/// The file is written by DocRouteCore's `AdminDefaultsStore.save(_:)`, with the daemon's one
/// atomic writer (temporary file, fsync, rename, fsync of the folder), so a crash leaves the old
/// or the new file.
public struct AdminDefaultsStore: Sendable {
    /// Why the defaults could not be read or written; the file is its `inputFile`.
    public typealias StoreError = DocRouteError<AdminDefaultsStoreErrorCode>

    public let path: String

    /// The file's name in the state directory.
    public static let fileName = "defaults.json"

    public init(stateDirectory: String) {
        self.path = (stateDirectory as NSString).appendingPathComponent(Self.fileName)
    }

    /// The stored defaults; none when the file does not exist yet.
    public func load() throws -> AdminDefaults {
        guard FileManager.default.fileExists(atPath: path) else { return AdminDefaults() }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw StoreError(code: .unreadable, inputFile: path, message: "cannot be read (permissions?)")
        }
        do {
            return try JSONDecoder().decode(AdminDefaults.self, from: data)
        } catch {
            throw StoreError(code: .invalid, inputFile: path, message: "is not a defaults file (\(error)); fix or remove it", cause: error)
        }
    }

    /// The file's bytes for `defaults`: pretty-printed JSON with sorted keys, so that a person
    /// can read it and a diff shows only what changed. Writing them is the daemon's side (its
    /// atomic writer); this target does no I/O beyond reading the file.
    public func encoded(_ defaults: AdminDefaults) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return Array(try encoder.encode(defaults))
    }
}
