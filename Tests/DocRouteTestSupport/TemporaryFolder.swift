import Foundation
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// A new empty folder for one test (`mkdtemp`, so private to this user and never shared between
/// tests running in parallel), removed with everything in it by ``remove()`` or at the end of
/// ``with(_:base:_:)``.
///
/// The one temporary-folder helper of every test target: paths come as `String` for Foundation
/// and as `FilePath` (``path(_:)``) for the daemon's own calls.
public final class TemporaryFolder: Sendable {
    /// The folder itself, absolute.
    public let root: FilePath

    /// The folder as a string.
    public var string: String { root.string }

    /// Makes `<base>/docroute-<label>-XXXXXX`. `base` is /tmp unless a test needs another file system
    /// (`/dev/shm`); Unix socket paths must stay under 108 bytes, so keep `label` short.
    public init(_ label: String = "test", base: String = "/tmp") throws {
        let prefix = base.hasSuffix("/") ? base : base + "/"
        var template = Array((prefix + "docroute-\(label)-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw TestSupportError("mkdtemp in \(base) failed: \(String(cString: strerror(errno)))")
        }
        root = FilePath(String(cString: made))
    }

    /// Runs `body` with a new folder and removes the folder afterwards, whatever `body` does.
    public static func with<T>(_ label: String = "test", base: String = "/tmp", _ body: (TemporaryFolder) throws -> T) throws -> T {
        let folder = try TemporaryFolder(label, base: base)
        defer { folder.remove() }
        return try body(folder)
    }

    /// The same for async tests.
    public static func with<T>(_ label: String = "test", base: String = "/tmp", _ body: (TemporaryFolder) async throws -> T) async throws -> T {
        let folder = try TemporaryFolder(label, base: base)
        defer { folder.remove() }
        return try await body(folder)
    }

    /// Removes the folder and everything below it, giving write permission back first: some tests
    /// take it away to provoke a failure.
    public func remove() {
        Self.makeRemovable(root.string)
        try? FileManager.default.removeItem(atPath: root.string)
    }

    /// Gives a folder and every folder below it read, write and search permission back, each before
    /// it is listed, so even a folder a test made unreadable (as another user) can be emptied.
    static func makeRemovable(_ folder: String) {
        chmod(folder, 0o755)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
            var info = stat()
            let path = folder + "/" + name
            if lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR { makeRemovable(path) }
        }
    }

    /// A path below the folder (the folder itself for "").
    public func path(_ relative: String) -> FilePath { relative.isEmpty ? root : root.appending(relative) }

    /// A path below the folder as a string.
    public func string(_ relative: String) -> String { path(relative).string }

    /// Creates a folder below this one (and its parents); returns its path.
    @discardableResult
    public func folder(_ relative: String) throws -> FilePath {
        let path = path(relative)
        try FileManager.default.createDirectory(atPath: path.string, withIntermediateDirectories: true)
        return path
    }

    /// Writes a file below the folder, creating its parent folders.
    public func write(_ relative: String, _ bytes: [UInt8]) throws {
        let path = path(relative)
        try FileManager.default.createDirectory(atPath: path.removingLastComponent().string, withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: path.string, contents: Data(bytes)) else {
            throw TestSupportError("cannot write \(path): \(String(cString: strerror(errno)))")
        }
    }

    public func write(_ relative: String, _ text: String) throws { try write(relative, Array(text.utf8)) }

    /// A file's bytes, or nil when it cannot be read.
    public func read(_ relative: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path(relative).string).map(Array.init)
    }

    /// Names in a folder, sorted; empty if it does not exist.
    public func list(_ relative: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path(relative).string)) ?? []).sorted()
    }

    /// Every file below a folder, recursively, relative to it, sorted.
    public func allFiles(_ relative: String) -> [String] {
        let base = path(relative).string
        guard let enumerator = FileManager.default.enumerator(atPath: base) else { return [] }
        var files: [String] = []
        while let next = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: base + "/" + next, isDirectory: &isDirectory), !isDirectory.boolValue {
                files.append(next)
            }
        }
        return files.sorted()
    }
}
