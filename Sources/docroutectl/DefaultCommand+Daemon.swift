import ArgumentParser
import DocRouteClient
import DocRouteHandlers
import DocRoutePlatform
import DocRouteProtocol
import Foundation
import NIOCore
import SystemPackage

extension DefaultCommand {
    /// How long `default set` waits for docrouted to take a change (it does within ~200 ms).
    static let confirmationTimeout: Duration = .seconds(5)

    /// After defaults.json is replaced: waits until docrouted's `status` reports these defaults
    /// (it watches the file), and says so. Returns false when the daemon runs and did not take
    /// them in time.
    static func confirm(_ defaults: AdminDefaults, options: HandlerOptions, socket explicit: String?) async -> Bool {
        // A configuration that cannot be read names no daemon to ask.
        guard let (path, origin) = try? DaemonSocketOptions.resolve(socket: explicit, options.configurationOptions) else {
            return true
        }
        guard (try? FilePath(path).stat()) != nil else {
            print("docrouted is not running (no socket at \(path), \(origin)): it reads the defaults when it starts")
            return true
        }
        let connection: DocRouteConnection
        do {
            connection = try await DocRouteConnection.connect(socketPath: path, logger: HandlerOptions.logger)
        } catch {
            if (error.cause as? IOError)?.errnoCode == Errno.connectionRefused.rawValue {
                print("docrouted is not running (nothing listens on \(path)): it reads the defaults when it starts")
                return true
            }
            StandardStreams.error("saved, but cannot ask docrouted whether it took the change: \(error.message)")
            return true
        }
        let taken = await waitUntilTaken(defaults, connection: connection, path: path)
        await connection.close()
        return taken
    }

    private static func waitUntilTaken(_ defaults: AdminDefaults, connection: DocRouteConnection, path: String) async -> Bool {
        let deadline = ContinuousClock.now + confirmationTimeout
        while true {
            let report: StatusReport
            do {
                report = try await connection.status()
            } catch {
                if error.code == .daemon(.notPermitted) {
                    print("saved; docrouted takes it within a second (confirming needs status, for root and the admin_group)")
                } else {
                    StandardStreams.error("saved, but cannot ask docrouted whether it took the change: \(error.message)")
                }
                return true
            }
            guard let reported = report.extra["adminDefaults"]?.objectValue else {
                print("saved; this docrouted does not report its defaults: reload it (systemctl reload docroute, or SIGHUP)")
                return true
            }
            if strings(reported["types"]) == defaults.types && strings(reported["schemes"]) == defaults.schemes {
                print("docrouted (\(path)) has taken the change")
                return true
            }
            guard ContinuousClock.now < deadline else {
                StandardStreams.error("""
                    saved, but docrouted (\(path)) still routes with its old defaults after \(confirmationTimeout); \
                    see its log (journalctl -u docroute) and reload it (systemctl reload docroute)
                    """)
                return false
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }

    private static func strings(_ value: JSONValue?) -> [String: String] {
        (value?.objectValue ?? [:]).compactMapValues(\.stringValue)
    }
}
