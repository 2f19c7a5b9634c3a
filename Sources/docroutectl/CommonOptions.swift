import ArgumentParser
import DocRouteConfiguration
import DocRouteHandlers
import DocRouteIntake
import DocRoutePlatform
import DocRouteTypes
import Foundation
import Logging
import SystemPackage

/// Options shared by the commands that read the handlers directory.
struct HandlerOptions: ParsableArguments {
    @Option(name: .long, help: "The handlers directory (default: handlers_directory of the configuration).")
    var handlers: String?

    @OptionGroup var configurationOptions: ConfigurationOptions

    @Option(name: .long, help: "The state directory holding the administrator's defaults (default: state_directory of the configuration).")
    var stateDirectory: String?

    func configuration() throws(CtlError) -> DaemonConfiguration {
        try configurationOptions.load().configuration
    }

    /// The handlers folder, which must exist: an empty registry from a folder that is not there
    /// would read as "no handlers" when the command simply looked in the wrong place.
    func handlersDirectory() throws(CtlError) -> String {
        let path: String
        let origin: String
        if let handlers {
            path = handlers
            origin = "--handlers"
        } else {
            let loaded = try configurationOptions.load()
            path = loaded.configuration.handlersDirectory
            origin = "handlers_directory of \(loaded.origin)"
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CtlError("""
                the handlers folder \(path) (\(origin)) does not exist
                  Point docroutectl at docrouted's configuration with --config PATH or DOCROUTE_CONFIG=PATH, \
                or name the folder with --handlers DIR; or create it and put handler Info.plists in it.
                """)
        }
        guard isDirectory.boolValue else { throw CtlError("the handlers folder \(path) (\(origin)) is not a folder") }
        do throws(Errno) {
            try FilePath(path).checkAccess([.read, .execute])
        } catch {
            throw CtlError("the handlers folder \(path) (\(origin)) cannot be read: \(error.systemMessage); run as root or as a member of its group")
        }
        return path
    }

    func stateDirectoryPath() throws(CtlError) -> String {
        if let stateDirectory { return stateDirectory }
        return try configuration().stateDirectory
    }

    /// Quiet unless something is wrong: manifest errors are shown by the commands themselves.
    static let logger = Logger(label: "docroutectl") { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = .critical
        return handler
    }

    /// The handlers of the handlers folder. With `optional` (for `type`, which only adds the
    /// types handlers declare), a folder that was not named with --handlers and does not exist
    /// gives no handlers instead of an error.
    ///
    /// They are read as docrouted would load them now: a `DocRouteUser` this host has no user of
    /// fails, and of two manifests with one bundle identifier the one docrouted loaded last (its
    /// record in the state directory) keeps serving while the other is refused.
    func registry(optional: Bool = false) throws(CtlError) -> HandlerRegistry {
        do {
            let directory = try handlersDirectory()
            let previouslyLoaded = (try? stateDirectoryPath()).map { LoadedHandlersStore(stateDirectory: $0).load() } ?? [:]
            return HandlerDirectory(path: directory)
                .load(logger: Self.logger, previouslyLoaded: previouslyLoaded, userExists: { UserDatabase.user(named: $0) != nil })
        } catch where optional && handlers == nil {
            return HandlerRegistry(manifests: [])
        }
    }

    func defaults() throws -> AdminDefaults {
        let path = try stateDirectoryPath()
        do {
            return try AdminDefaultsStore(stateDirectory: path).load()
        } catch {
            throw CtlError("cannot read the administrator's defaults: \(error)")
        }
    }
}

enum JSONOutput {
    /// Writes a JSON value (built from dictionaries, arrays, strings, numbers, NSNull) on one line.
    static func print(_ value: Any) throws {
        let data = try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted])
        FileHandle.standardOutput.write(data)
        FileHandle.standardOutput.write(Data("\n".utf8))
    }

    static func orNull(_ value: String?) -> Any { value ?? NSNull() }
}

enum TablePrinter {
    /// Prints rows with aligned columns.
    static func print(_ rows: [[String]]) {
        guard let width = rows.map(\.count).max() else { return }
        var widths = Array(repeating: 0, count: width)
        for row in rows { for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) } }
        for row in rows {
            let line = row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
            Swift.print(line)
        }
    }
}
