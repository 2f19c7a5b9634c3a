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
            let bytes = FileManager.default.contents(atPath: file) ?? Data(file.utf8)
            hash.update(data: Data(Self.routingText(ofManifest: bytes).utf8))
            hash.update(data: [0])
        }
        let digest = hash.finalize().map { String(format: "%02x", $0) }.joined()
        let launchable = registry.handlers.filter { $0.manifest.launchCommand != nil }.map(\.bundleIdentifier).sorted()
        self.init(name: name, registryDigest: digest, bundleIdentifiers: files.map(\.key), launchable: launchable, version: version)
    }
}

extension FleetHost {
    /// What of a manifest routing depends on, as one text: every key but docroute's own
    /// `DocRoute…` keys, which are the host's business (who the handler runs as, how it is
    /// launched, where its container is, how long copies stay), in key order, so that the same
    /// manifest written in XML or binary, or with its keys in another order, reads the same. A
    /// file that is not a property list reads as its bytes.
    package static func routingText(ofManifest bytes: Data) -> String {
        guard let list = try? PropertyListSerialization.propertyList(from: bytes, options: [], format: nil),
              let dictionary = list as? [String: Any]
        else { return bytes.base64EncodedString() }
        return canonical(dictionary.filter { !$0.key.hasPrefix("DocRoute") })
    }

    private static func canonical(_ value: Any) -> String {
        switch value {
        case let dictionary as [String: Any]:
            return "{" + dictionary.keys.sorted().map { "\(canonical($0))=\(canonical(dictionary[$0]!))" }.joined(separator: ";") + "}"
        case let array as [Any]:
            return "(" + array.map(canonical).joined(separator: ",") + ")"
        case let string as String:
            return "\"" + string.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        case let data as Data:
            return "<" + data.base64EncodedString() + ">"
        case let date as Date:
            return "@\(date.timeIntervalSince1970)"
        default:
            // Numbers and booleans.
            return "\(value)"
        }
    }

    /// This host as `configuration` names it, with its handlers as the daemon loads them at start.
    package static func loading(_ configuration: DaemonConfiguration, fleet: FleetConfiguration) -> FleetHost {
        let registry = HandlerDirectory(path: configuration.handlersDirectory).load(
            logger: Logger(label: "docrouted.fleet", factory: { _ in SwiftLogNoOpLogHandler() }),
            previouslyLoaded: LoadedHandlersStore(stateDirectory: configuration.stateDirectory).load(),
            userExists: { UserDatabase.user(named: $0) != nil })
        return FleetHost(name: fleet.hostName, registry: registry, version: DocRouteVersion.number)
    }
}
