import ArgumentParser
import DocRouteConfiguration
import DocRouteIntake
import DocRoutePlatform
import Foundation

/// `--config`, shared by every command (through ``HandlerOptions`` and ``DaemonSocketOptions``):
/// docrouted's configuration, where the handlers folder, the state directory, the quarantine and
/// the socket are read from, so docroutectl looks where the daemon looks.
struct ConfigurationOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "docrouted's configuration (default: $DOCROUTE_CONFIG, else /etc/docroute/docroute.toml).",
            valueName: "path"))
    var config: String?

    static let environmentVariable = "DOCROUTE_CONFIG"
    static let defaultPath = "/etc/docroute/docroute.toml"

    /// A configuration and where it came from, for messages ("handlers_directory of …").
    struct Loaded {
        var configuration: DaemonConfiguration
        /// "/etc/docroute/docroute.toml", or what stood in for a missing default file.
        var origin: String
    }

    /// The file to read: `--config`, then `$DOCROUTE_CONFIG`, then the installed default; nil
    /// when none was asked for and the installed default does not exist.
    func path(environment: [String: String] = ProcessInfo.processInfo.environment) -> (path: String, explicit: Bool)? {
        if let config { return (config, true) }
        if let path = environment[Self.environmentVariable], !path.isEmpty { return (path, true) }
        return FileManager.default.fileExists(atPath: Self.defaultPath) ? (Self.defaultPath, false) : nil
    }

    /// Reads the configuration. A file named by `--config` or `$DOCROUTE_CONFIG` must exist; without
    /// either and without /etc/docroute/docroute.toml, the built-in defaults stand in (the daemon
    /// does the same without `--config`), and messages say so.
    func load() throws(CtlError) -> Loaded {
        guard let (path, explicit) = path() else {
            do {
                return Loaded(configuration: try DaemonConfiguration.embeddedDefault(),
                              origin: "docrouted's built-in defaults (\(Self.defaultPath) does not exist)")
            } catch {
                throw CtlError("the built-in configuration does not parse: \(error)")
            }
        }
        let source = config != nil ? "--config" : explicit ? "$\(Self.environmentVariable)" : nil
        do {
            return Loaded(configuration: try DaemonConfiguration.load(path: path), origin: path)
        } catch where error.code == .unreadable && !FileManager.default.fileExists(atPath: path) {
            throw CtlError("""
                the configuration \(path)\(source.map { " (from \($0))" } ?? "") does not exist
                  Give docrouted's configuration with --config PATH or DOCROUTE_CONFIG=PATH \
                (make run writes run/docroute.toml and prints the export line).
                """)
        } catch {
            throw CtlError("cannot read the configuration: \(error)")
        }
    }
}

/// A failure docroutectl reports in words: what it was doing, on which path, what to do.
/// ArgumentParser prints it as "Error: …" and exits 1.
struct CtlError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
