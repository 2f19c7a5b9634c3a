import Foundation
import PostgresNIO

extension FleetQueue {
    /// Publishes the handlers subscribed on this host (`hosts.subscribed`), for every host's
    /// `status`. Only what operators read: claiming never looks at it.
    package func publishSubscribed(_ bundleIdentifiers: [String]) async throws(FleetError) {
        let host = hostName
        let logger = logger
        let sorted = bundleIdentifiers.sorted()
        try await exclusive("publishing the handlers subscribed here") { connection in
            try await connection.query("UPDATE hosts SET subscribed = \(sorted) WHERE name = \(host)", logger: logger)
        }
    }
}
