import ArgumentParser
import DocRouteCore
import DocRouteHandlers
import DocRouteTypes
import Foundation
import Logging

/// Options shared by the commands that read the handlers directory.
struct HandlerOptions: ParsableArguments {
    @Option(name: .long, help: "The handlers directory (default: handlers_directory of --config, else /etc/docroute/handlers.d).")
    var handlers: String?

    @Option(name: .long, help: "docrouted's configuration file, for its directories.")
    var config: String?

    @Option(name: .long, help: "The state directory holding the administrator's defaults (default: state_directory of --config).")
    var stateDirectory: String?

    func configuration() throws -> DaemonConfiguration {
        do {
            if let config { return try DaemonConfiguration.load(path: config) }
            return try DaemonConfiguration.embeddedDefault()
        } catch {
            throw ValidationError("\(error)")
        }
    }

    func handlersDirectory() throws -> String {
        if let handlers { return handlers }
        return try configuration().handlersDirectory
    }

    func stateDirectoryPath() throws -> String {
        if let stateDirectory { return stateDirectory }
        return try configuration().stateDirectory
    }

    /// Quiet unless something is wrong: manifest errors are shown by the commands themselves.
    static let logger = Logger(label: "docroutectl") { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = .critical
        return handler
    }

    func registry() throws -> HandlerRegistry {
        HandlerDirectory(path: try handlersDirectory()).load(logger: Self.logger)
    }

    func defaults() throws -> AdminDefaults {
        let path = try stateDirectoryPath()
        do {
            return try AdminDefaultsStore(stateDirectory: path).load()
        } catch {
            throw ValidationError("\(error)")
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
