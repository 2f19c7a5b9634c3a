import DocRouteLedger
import DocRouteProtocol
import Foundation

extension LedgerBackend {
    /// The documents a `history` request asks for, as the reply carries them; a field that does
    /// not read (a delivery id, a time, a state) is a `bad-request` naming it.
    package func history(_ request: HistoryRequest) async -> Result<[JSONValue], ProtocolError> {
        let query: HistoryQuery
        switch Self.historyQuery(request) {
        case .success(let read): query = read
        case .failure(let error): return .failure(error)
        }
        do {
            return .success(try await ledger.history(query).map(\.json))
        } catch {
            return .failure(ProtocolError(code: .internal, message: "the ledger could not be read: \(error)"))
        }
    }

    /// The local ledger's documents that match `query`.
    func histories(_ query: HistoryQuery) async throws -> [DocumentHistory] {
        try await ledger.history(query)
    }

    /// The query a `history` request asks; a field that does not read is a `bad-request` naming it.
    static func historyQuery(_ request: HistoryRequest) -> Result<HistoryQuery, ProtocolError> {
        var query = HistoryQuery(name: request.name, path: request.path, bundleIdentifier: request.bundleIdentifier,
                                 limit: request.limit ?? 100)
        func refuse(_ message: String) -> Result<HistoryQuery, ProtocolError> {
            .failure(ProtocolError(code: .badRequest, message: message))
        }
        if let text = request.deliveryID {
            guard let deliveryID = UUID(uuidString: text) else { return refuse("'deliveryID' \(text) is not a delivery id (a UUID)") }
            query.deliveryID = deliveryID
        }
        for (field, text) in [("since", request.since), ("until", request.until)] {
            guard let text else { continue }
            guard let date = DocumentHistory.date(timestamp: text) ?? (try? Date(text, strategy: .iso8601)) else {
                return refuse("'\(field)' \(text) is not an RFC 3339 time in UTC (2026-11-26T10:02:00Z)")
            }
            if field == "since" { query.since = date } else { query.until = date }
        }
        if let text = request.state {
            guard let state = DocumentHistory.State(rawValue: text) else {
                return refuse("'state' \(text) is not one of \(DocumentHistory.State.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            query.state = state
        }
        return .success(query)
    }
}
