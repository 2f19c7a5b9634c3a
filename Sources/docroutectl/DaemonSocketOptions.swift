import ArgumentParser
import DocRouteClient
import DocRoutePlatform
import DocRouteProtocol
import Foundation
import NIOCore
import SystemPackage

/// `--socket` and `--config`, shared by the commands that talk to docrouted.
struct DaemonSocketOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "docrouted's socket (default: $DOCROUTE_SOCKET, else socket of the configuration).",
            valueName: "path"))
    var socket: String?

    @OptionGroup var configurationOptions: ConfigurationOptions

    /// The socket and where its path came from: `--socket`, then `$DOCROUTE_SOCKET` (what a
    /// launched handler is given), then `socket` of the configuration.
    func resolve() throws(CtlError) -> (path: String, origin: String) {
        try Self.resolve(socket: socket, configurationOptions)
    }

    /// ``resolve()`` for a command that takes `--socket` and the configuration's options its own way.
    static func resolve(socket: String?, _ configurationOptions: ConfigurationOptions) throws(CtlError) -> (path: String, origin: String) {
        if let socket { return (socket, "--socket") }
        if let path = ProcessInfo.processInfo.environment[WireProtocol.socketPathEnvironmentVariable], !path.isEmpty {
            return (path, "$\(WireProtocol.socketPathEnvironmentVariable)")
        }
        let loaded = try configurationOptions.load()
        return (loaded.configuration.socket, "socket of \(loaded.origin)")
    }

    /// The socket to connect to, for messages; the protocol's default when the configuration
    /// cannot be read (``connect()`` reports that).
    var path: String { (try? resolve().path) ?? DocRouteConnection.defaultSocketPath() }

    /// ``connect()`` for a command's `run`: a failure is told on standard error
    /// (``DocRouteClientError/report(_:status:)``) and becomes the command's exit status.
    func connectReporting() async throws(ExitCode) -> DocRouteConnection {
        do {
            return try await connect()
        } catch {
            throw error.report("connect to docrouted")
        }
    }

    /// Connects quietly: the commands report failures themselves, on standard error. A socket
    /// that is not there, or that nobody listens on, is named with where its path came from
    /// and what to do.
    func connect() async throws(DocRouteClientError) -> DocRouteConnection {
        let path: String
        let origin: String
        do {
            (path, origin) = try resolve()
        } catch {
            throw DocRouteClientError(code: .connectFailed, message: "cannot find docrouted's socket: \(error)")
        }
        do throws(Errno) {
            _ = try FilePath(path).stat()
        } catch {
            let reason = error == .noSuchFileOrDirectory ? "does not exist" : "cannot be looked up (\(error.systemMessage))"
            throw DocRouteClientError(code: .connectFailed, message: """
                cannot connect to docrouted: its socket \(path) (\(origin)) \(reason)
                  Is docrouted running? Start it (systemctl start docroute.socket, or make run), or point \
                docroutectl at its configuration with --config PATH or DOCROUTE_CONFIG=PATH, or at its socket with --socket PATH.
                """)
        }
        do {
            return try await DocRouteConnection.connect(socketPath: path, logger: HandlerOptions.logger)
        } catch where error.code == .connectFailed {
            let number = (error.cause as? IOError)?.errnoCode
            let what: String
            switch number {
            case Errno.connectionRefused.rawValue: what = "nothing listens on it: docrouted is not running (a stale socket file). Start it (systemctl start docroute.socket, or make run)."
            case Errno.permissionDenied.rawValue, Errno.notPermitted.rawValue: what = "permission denied. Run as root, or as a member of docrouted's admin_group (or the handler's user for subscribe)."
            case Errno.notSocket.rawValue: what = "it is not a socket. Check socket in the configuration, or --socket."
            default: what = number.map { Errno(rawValue: $0).systemMessage + "." } ?? "\(error.message)"
            }
            throw DocRouteClientError(code: .connectFailed, message: "cannot connect to docrouted's socket \(path) (\(origin)): \(what)", cause: error.cause)
        }
    }
}
