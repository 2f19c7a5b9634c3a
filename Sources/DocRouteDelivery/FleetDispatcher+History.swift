import DocRouteFleet
import DocRouteIntake
import DocRouteLedger
import DocRouteProtocol
import Foundation

extension FleetDispatcher {
    /// Records in the fleet that these claims were written into their sandbox on this host (the
    /// copy's path), with the other events of the moment (``FleetHistoryWriter``), without holding
    /// up the announcement; a failure only leaves the events out (this host's own ledger has them).
    func recordWritten(_ copies: [(deliveryID: UUID, path: String)], at time: Date) {
        guard !copies.isEmpty else { return }
        let events = copies.map { copy in
            FleetQueue.HistoryRecord(deliveryID: copy.deliveryID, event: "written", at: time, detailJSON: Self.detail(["path": copy.path]))
        }
        history.record(events)
    }

    /// Records in the fleet who on this host was told of these acknowledged deliveries, as the
    /// local ledger says, without holding up the next acknowledgements; a failure only leaves
    /// them out. The local dispatcher writes who it told in the background, with the
    /// acknowledgement: one not in the ledger yet is looked for again, a few times.
    func recordTold(_ deliveryIDs: [UUID]) {
        guard !deliveryIDs.isEmpty else { return }
        Task { [local, history] in
            var missing = deliveryIDs
            for attempt in 0..<8 where !missing.isEmpty {
                if attempt > 0 { guard (try? await Task.sleep(for: .milliseconds(250))) != nil else { return } }
                guard let records = try? await local.ledger.settledDeliveries(missing) else { continue }
                var events: [FleetQueue.HistoryRecord] = []
                for record in records {
                    guard let at = record.notifiedAt else { continue }
                    var detail: [String: String] = [:]
                    if let by = record.notifiedBy { detail["by"] = by }
                    if let to = record.notifiedTo { detail["to"] = to }
                    events.append(FleetQueue.HistoryRecord(deliveryID: record.deliveryID, event: "notified", at: at, detailJSON: Self.detail(detail)))
                }
                let recorded = Set(events.map(\.deliveryID))
                missing.removeAll { recorded.contains($0) }
                history.record(events)
            }
        }
    }

    /// A JSON object of strings, as text.
    static func detail(_ values: [String: String]) -> String {
        guard let data = try? JSONEncoder().encode(JSONValue.object(values.mapValues(JSONValue.string))) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}
