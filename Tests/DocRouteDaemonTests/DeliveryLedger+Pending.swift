import Foundation
import Testing
@testable import DocRouteLedger

extension DeliveryLedger {
    /// The whole records of what a handler is owed, in commit order: the dispatcher's own read
    /// (``pendingEvents(bundleIdentifier:after:limit:)``), each row then read whole, so that a
    /// test checks the query the daemon runs and can still look at any column.
    func pending(bundleIdentifier: String, after sequence: Int64 = 0, limit: Int = 100) throws -> [LedgerRecord] {
        try pendingEvents(bundleIdentifier: bundleIdentifier, after: sequence, limit: limit).map { event in
            let id = try #require(UUID(uuidString: event.deliveryID))
            return try #require(try record(deliveryID: id))
        }
    }
}
