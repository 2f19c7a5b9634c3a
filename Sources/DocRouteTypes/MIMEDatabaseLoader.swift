// swift-system's calls retry EINTR and throw the `Errno` they failed with: the loader reads its
// files without the C library, as a pure-logic target must.
import SystemPackage

/// Finds and reads the compiled shared-mime-info files, the only part of the MIME code that
/// touches the file system.
///
/// Directories are searched as the XDG Base Directory and shared-mime-info specs say:
/// `$XDG_DATA_HOME/mime` (default `$HOME/.local/share/mime`), then `mime/` under each
/// `$XDG_DATA_DIRS` entry (default `/usr/local/share:/usr/share`), earlier ones taking
/// precedence. Empty or relative values are ignored, as the XDG spec requires. In each
/// directory the files `globs2`, `magic`, `subclasses` and `aliases` are read if present.
///
/// ```swift
/// let database = try MIMEDatabaseLoader(environment: ProcessInfo.processInfo.environment).load()
/// ```
public struct MIMEDatabaseLoader: Sendable {
    /// The environment variables consulted: `XDG_DATA_HOME`, `XDG_DATA_DIRS` and `HOME`.
    public var environment: [String: String]

    /// Files larger than this are refused; the real ones are tens of kilobytes.
    public static let maximumFileSize = 64 << 20

    /// Creates a loader for the given environment (pass the process environment in production
    /// and a fixture directory in tests).
    public init(environment: [String: String]) {
        self.environment = environment
    }

    /// The `mime` directories to search, highest precedence first, without duplicates.
    public var searchDirectories: [String] {
        var bases: [String] = []
        if let dataHome = Self.absolute(environment["XDG_DATA_HOME"]) {
            bases.append(dataHome)
        } else if let home = Self.absolute(environment["HOME"]) {
            bases.append(Self.joined(home, ".local/share"))
        }
        let dataDirs = environment["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share"
        bases += dataDirs.split(separator: ":").compactMap { Self.absolute(String($0)) }
        var directories: [String] = []
        for base in bases {
            let directory = Self.joined(base, "mime")
            if !directories.contains(directory) { directories.append(directory) }
        }
        return directories
    }

    /// Parses every search directory that has at least one of the compiled files.
    ///
    /// - Throws: ``MIMEDatabaseError`` when a file exists but cannot be read or parsed.
    public func loadLayers() throws -> [MIMEDatabaseLayer] {
        var layers: [MIMEDatabaseLayer] = []
        for directory in searchDirectories {
            let globs2 = try Self.readFileIfPresent(Self.joined(directory, "globs2"))
            let magic = try Self.readFileIfPresent(Self.joined(directory, "magic"))
            let subclasses = try Self.readFileIfPresent(Self.joined(directory, "subclasses"))
            let aliases = try Self.readFileIfPresent(Self.joined(directory, "aliases"))
            guard globs2 != nil || magic != nil || subclasses != nil || aliases != nil else { continue }
            layers.append(
                try MIMEDatabaseLayer(
                    directory: directory,
                    globs2: globs2,
                    magic: magic,
                    subclasses: subclasses,
                    aliases: aliases
                )
            )
        }
        return layers
    }

    /// Loads the database, or returns ``MIMEDatabase/builtin`` when no directory has one.
    ///
    /// - Throws: ``MIMEDatabaseError`` when a file exists but cannot be read or parsed; a
    ///   caller that prefers to keep going can catch it and use ``MIMEDatabase/builtin``.
    public func load() throws -> MIMEDatabase {
        let layers = try loadLayers()
        return layers.isEmpty ? .builtin : MIMEDatabase(layers: layers)
    }

    static func absolute(_ path: String?) -> String? {
        guard let path, path.hasPrefix("/") else { return nil }
        return path
    }

    static func joined(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// The whole file, or `nil` if it does not exist.
    static func readFileIfPresent(_ path: String) throws -> [UInt8]? {
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec])
        } catch let error as Errno {
            if error == .noSuchFileOrDirectory || error == .notDirectory { return nil }
            throw unreadable(path, call: "open", errno: error.rawValue)
        }
        defer { try? descriptor.close() }

        let status: Stat
        do throws(Errno) {
            status = try descriptor.stat()
        } catch {
            throw unreadable(path, call: "fstat", errno: error.rawValue)
        }
        guard status.type == .regular else {
            throw MIMEDatabaseError(
                code: .unreadableFile,
                inputFile: path,
                message: "expected a regular file; remove what is there and run update-mime-database"
            )
        }
        let size = Int(status.size)
        guard size <= maximumFileSize else {
            throw MIMEDatabaseError(
                code: .fileTooLarge,
                inputFile: path,
                message: "the file is \(size) bytes, more than the \(maximumFileSize) a MIME database file can need"
            )
        }

        var failure: Errno?
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            initialized = 0
            while initialized < size {
                do {
                    let count = try descriptor.read(into: UnsafeMutableRawBufferPointer(UnsafeMutableBufferPointer(rebasing: buffer[initialized..<size])))
                    if count == 0 { break }
                    initialized += count
                } catch {
                    failure = error as? Errno ?? .ioError
                    break
                }
            }
        }
        if let failure { throw unreadable(path, call: "read", errno: failure.rawValue) }
        return bytes
    }

    private static func unreadable(_ path: String, call: String, errno code: Int32) -> MIMEDatabaseError {
        MIMEDatabaseError(
            code: .unreadableFile,
            inputFile: path,
            message: "could not read the file; check its permissions or regenerate it with update-mime-database",
            cause: MIMEDatabaseErrorCode.SystemCallFailure(call: call, errno: code)
        )
    }
}
