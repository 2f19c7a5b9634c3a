import DocRouteErrors
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Keeps ``AdminDefaults`` in `<state_directory>/defaults.json`, written atomically and durably
/// (temporary file, fsync, rename, fsync of the folder), so a crash leaves the old or the new file.
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

    /// Replaces the stored defaults.
    public func save(_ defaults: AdminDefaults) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = try encoder.encode(defaults)
        let directory = (path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let temporary = path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw StoreError(code: .writeFailed, inputFile: temporary, message: "cannot be created: \(String(cString: strerror(errno)))") }
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd)
        close(fd)
        guard written == data.count, synced == 0, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw StoreError(code: .writeFailed, inputFile: path, message: "cannot be written: \(reason)")
        }
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            fsync(directoryFD)
            close(directoryFD)
        }
    }
}
