import Crypto
import DocRouteConfiguration
import DocRouteHandlers
import DocRoutePlatform
import Foundation
import Logging

/// What a host publishes of itself in the `hosts` table: its name, its handler registry (the
/// bundle identifiers and a digest of their manifests, so hosts whose registries differ can be
/// named), the handlers it can launch, and its docroute version.
package struct FleetHost: Sendable, Hashable {
    package var name: String
    /// SHA-256, in hex, of every loaded manifest's identifier and bytes, in identifier order.
    package var registryDigest: String
    package var bundleIdentifiers: [String]
    /// The handlers whose manifest here has a launch command (`DocRouteLaunchCommand`): the
    /// hosts among which one is chosen to launch a handler connected nowhere (``FleetLaunchChoice``).
    /// The running daemon narrows it to what its launcher would start (``FleetQueue/publishLaunchable(_:)``).
    package var launchable: [String]
    package var version: String

    package init(name: String, registryDigest: String, bundleIdentifiers: [String], launchable: [String] = [], version: String) {
        self.name = name
        self.registryDigest = registryDigest
        self.bundleIdentifiers = bundleIdentifiers
        self.launchable = launchable
        self.version = version
    }

    /// The record for `registry` as loaded on this host.
    package init(name: String, registry: HandlerRegistry, version: String) {
        let files = registry.loadedFiles.sorted { $0.key < $1.key }
        var hash = SHA256()
        for (identifier, file) in files {
            hash.update(data: Data(identifier.utf8) + [0])
            // Two hosts agree when their manifests say the same, wherever the files are kept.
            hash.update(data: FileManager.default.contents(atPath: file) ?? Data(file.utf8))
            hash.update(data: [0])
        }
        let digest = hash.finalize().map { String(format: "%02x", $0) }.joined()
        let launchable = registry.handlers.filter { $0.manifest.launchCommand != nil }.map(\.bundleIdentifier).sorted()
        self.init(name: name, registryDigest: digest, bundleIdentifiers: files.map(\.key), launchable: launchable, version: version)
    }
}

extension FleetHost {
    /// This host as `configuration` names it, with its handlers as the daemon loads them at start.
    package static func loading(_ configuration: DaemonConfiguration, fleet: FleetConfiguration) -> FleetHost {
        let registry = HandlerDirectory(path: configuration.handlersDirectory).load(
            logger: Logger(label: "docrouted.fleet", factory: { _ in SwiftLogNoOpLogHandler() }),
            previouslyLoaded: LoadedHandlersStore(stateDirectory: configuration.stateDirectory).load(),
            userExists: { UserDatabase.user(named: $0) != nil })
        return FleetHost(name: fleet.hostName, registry: registry, version: DocRouteVersion.number)
    }
}
