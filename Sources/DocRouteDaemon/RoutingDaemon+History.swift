import DocRouteDelivery
import DocRouteProtocol
import Foundation

/// `history` and `redeliver` (docs/PROTOCOL.md, proposals): where documents went, from the
/// ledger, and sending a settled one to its handler again.
extension RoutingDaemon {
    /// The reply to `history`; in a fleet, this host's ledger merged with the fleet's history.
    nonisolated func history(_ request: HistoryRequest, id: String?) async -> DaemonMessage {
        if let fleet {
            switch await fleet.history(request, local: backend) {
            case .success(let reply): return .history(id: id, documents: reply.documents, fleet: reply.fleet)
            case .failure(let error): return .error(id: id, code: error.code, message: error.message)
            }
        }
        switch await backend.history(request) {
        case .success(let documents): return .history(id: id, documents: documents)
        case .failure(let error): return .error(id: id, code: error.code, message: error.message)
        }
    }

    /// The reply to `redeliver`; each delivery made owed again is sent to its handler when it
    /// is subscribed (or launched, as any delivery).
    nonisolated func redeliver(_ deliveryIDs: [String], declined: Bool, bundleIdentifier: String?, id: String?) async -> DaemonMessage {
        do {
            let (results, bundles) = try await backend.redeliver(deliveryIDs, declinedOf: bundleIdentifier, declined: declined)
            for bundle in bundles.sorted() {
                await dispatcher.committed(bundleIdentifier: bundle)
            }
            return .redelivered(id: id, results: results.map(\.json))
        } catch {
            return .error(id: id, code: .internal, message: "the ledger could not be updated: \(error)")
        }
    }
}
