import Foundation
import Logging
import PostgresNIO

/// Whether the fleet's hosts load the same handlers. A document is routed on the host where it
/// arrived, by that host's registry, and claimed on whichever host its handler is subscribed: a
/// host that lacks a handler, or has another manifest for it, routes differently. Each host
/// publishes its registry's digest and bundle identifiers at registration; this compares them.
package struct FleetRegistryAgreement: Sendable, Hashable {
    /// Another host, as the `hosts` table has it.
    package struct Peer: Sendable, Hashable {
        package var name: String
        package var registryDigest: String
        package var bundleIdentifiers: [String]
        /// Seconds since its last heartbeat.
        package var silentSeconds: Double
        package var leaseSeconds: Int

        package init(name: String, registryDigest: String, bundleIdentifiers: [String], silentSeconds: Double, leaseSeconds: Int) {
            self.name = name
            self.registryDigest = registryDigest
            self.bundleIdentifiers = bundleIdentifiers
            self.silentSeconds = silentSeconds
            self.leaseSeconds = leaseSeconds
        }

        /// Heard from within its lease: it may hold and claim deliveries now.
        package var isLive: Bool { silentSeconds <= Double(leaseSeconds) }
    }

    /// A host whose registry is not this host's, and how.
    package struct Difference: Sendable, Hashable {
        package var host: String
        /// Handlers it has that this host lacks.
        package var onlyThere: [String]
        /// Handlers this host has that it lacks.
        package var onlyHere: [String]
        package var isLive: Bool

        /// In words, for `--check` and the log.
        package var description: String {
            var parts: [String] = []
            if !onlyThere.isEmpty { parts.append("it has \(onlyThere.joined(separator: ", ")), which this host lacks") }
            if !onlyHere.isEmpty { parts.append("it lacks \(onlyHere.joined(separator: ", "))") }
            if parts.isEmpty { parts.append("the same handlers with other manifests") }
            return "host \(host)\(isLive ? "" : " (not heard from within its lease)") loads another handler registry: "
                + parts.joined(separator: "; ")
                + "; deploy the same manifests to every host, then reload (systemctl reload docroute)"
        }
    }

    package var host: FleetHost
    package var peers: [Peer]

    package init(host: FleetHost, peers: [Peer]) {
        self.host = host
        self.peers = peers
    }

    /// The hosts whose registries differ from this host's, by name.
    package var differences: [Difference] {
        let here = Set(host.bundleIdentifiers)
        return peers.filter { $0.registryDigest != host.registryDigest }.sorted { $0.name < $1.name }.map { peer in
            let there = Set(peer.bundleIdentifiers)
            return Difference(host: peer.name, onlyThere: there.subtracting(here).sorted(), onlyHere: here.subtracting(there).sorted(),
                              isLive: peer.isLive)
        }
    }

    /// The other hosts in `hosts`, read on `connection`.
    package static func peers(of host: String, on connection: PostgresConnection, logger: Logger) async throws -> [Peer] {
        let rows = try await connection.query("""
            SELECT name, registry_digest, bundle_identifiers, extract(epoch FROM now() - last_heartbeat)::float8, lease_seconds
            FROM hosts WHERE name <> \(host) ORDER BY name
            """, logger: logger)
        var peers: [Peer] = []
        for try await (name, digest, identifiers, silent, lease) in rows.decode((String, String, [String], Double, Int32).self) {
            peers.append(Peer(name: name, registryDigest: digest, bundleIdentifiers: identifiers, silentSeconds: silent, leaseSeconds: Int(lease)))
        }
        return peers
    }
}
