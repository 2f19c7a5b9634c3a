import DocRouteProtocol
import Foundation

/// The dispatcher's part of the seam (``DeliveryStore``), on the SQLite ledger: reads on GRDB's
/// reader connections and writes on its writer, off the caller's executor.
extension DeliveryLedger {
    package func owed(bundleIdentifier: String, afterSequence sequence: Int64, limit: Int) async throws -> [OwedDelivery] {
        let pending = try await readAsync("read pending deliveries") { [self] db in
            try pendingEvents(bundleIdentifier: bundleIdentifier, after: sequence, limit: limit, db)
        }
        return pending.compactMap { pending in
            pending.documentEvent.map { OwedDelivery(sequence: pending.sequence, event: $0) }
        }
    }

    package func owedCount(bundleIdentifier: String) async throws -> Int {
        try await readAsync("count pending deliveries") { [self] db in try pendingCount(bundleIdentifier: bundleIdentifier, db) }
    }

    package func acknowledge(_ acknowledgements: [DeliveryAcknowledgement], notices: [DeliveryNotice]) async throws {
        var grouped: [String: (bundle: String, handled: Bool, ids: [UUID])] = [:]
        var order: [String] = []
        for ack in acknowledgements {
            guard let id = UUID(canonicalText: ack.deliveryID) else { continue }
            let key = "\(ack.bundleIdentifier)|\(ack.handled)"
            if grouped[key] == nil { order.append(key) }
            grouped[key, default: (ack.bundleIdentifier, ack.handled, [])].ids.append(id)
        }
        let groups = order.compactMap { grouped[$0] }
        guard !groups.isEmpty || !notices.isEmpty else { return }
        let date = Date()
        let taken = try await writeAsync("record acknowledgements") { [self] db in
            var taken: [PendingTally.Change] = []
            // Told first: a document acknowledged in the same write was sent before it was acknowledged.
            try Self.recordNotices(notices, db)
            for group in groups {
                _ = try acknowledge(group.ids, handled: group.handled, bundleIdentifier: group.bundle, at: date, db, taken: &taken)
            }
            return taken
        }
        pendingTally.record(taken)
    }
}
