import Foundation
import PostgresNIO

extension FleetQueue {
    /// Publishes the handlers subscribed on this host (`hosts.subscribed`), for every host's
    /// `status` and for the choice of a host to launch a handler subscribed nowhere (claiming
    /// never looks at it). A launch recorded for a handler subscribed here has done its work and
    /// is forgotten: the next time that handler is connected nowhere, a host launches it at once.
    package func publishSubscribed(_ bundleIdentifiers: [String]) async throws(FleetError) {
        let host = hostName
        let logger = logger
        let sorted = bundleIdentifiers.sorted()
        let keys = sorted.map { $0.lowercased() }
        try await exclusive("publishing the handlers subscribed here") { connection in
            try await connection.query("UPDATE hosts SET subscribed = \(sorted) WHERE name = \(host)", logger: logger)
            if !keys.isEmpty {
                try await connection.query("DELETE FROM launches WHERE handler = ANY(\(keys))", logger: logger)
            }
        }
    }
}
