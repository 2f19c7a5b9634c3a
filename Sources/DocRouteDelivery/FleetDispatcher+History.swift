import DocRouteFleet
import DocRouteIntake
import DocRouteLedger
import DocRouteProtocol
import Foundation

extension FleetDispatcher {
    /// Records in the fleet that these claims were written into their sandbox on this host (the
    /// copy's path), one statement for the batch, without holding up the announcement; a failure
    /// only leaves the events out (this host's own ledger has them).
    func recordWritten(_ copies: [(deliveryID: UUID, path: String)]) {
        guard !copies.isEmpty else { return }
        let now = Date()
        let events = copies.map { copy in
            FleetQueue.HistoryRecord(deliveryID: copy.deliveryID, event: "written", at: now, detailJSON: Self.detail(["path": copy.path]))
        }
        Task { [queue, logger] in
            do {
                try await queue.record(events)
            } catch {
                logger.debug("fleet: sandbox copies were not recorded in the fleet's history: \(error)")
            }
        }
    }

    /// Records in the fleet who on this host was told of these deliveries, as the local ledger
    /// says, just before their acknowledgements are recorded; a failure only leaves them out.
    func recordTold(_ deliveryIDs: [UUID]) async {
        guard !deliveryIDs.isEmpty else { return }
        let records: [LedgerRecord]
        do {
            records = try await local.ledger.settledDeliveries(deliveryIDs)
        } catch {
            return
        }
        let events = records.compactMap { record -> FleetQueue.HistoryRecord? in
            guard let at = record.notifiedAt else { return nil }
            var detail: [String: String] = [:]
            if let by = record.notifiedBy { detail["by"] = by }
            if let to = record.notifiedTo { detail["to"] = to }
            return FleetQueue.HistoryRecord(deliveryID: record.deliveryID, event: "notified", at: at, detailJSON: Self.detail(detail))
        }
        do {
            try await queue.record(events)
        } catch {
            logger.debug("fleet: announcements were not recorded in the fleet's history: \(error)")
        }
    }

    /// A JSON object of strings, as text.
    static func detail(_ values: [String: String]) -> String {
        guard let data = try? JSONEncoder().encode(JSONValue.object(values.mapValues(JSONValue.string))) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}
