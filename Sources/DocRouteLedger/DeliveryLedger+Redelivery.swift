import DocRouteProtocol
import Foundation
import GRDB

/// Sending a settled document to its handler again (`docroutectl redeliver`), and reading the
/// ledger's history without the daemon (`docroutectl history` when docrouted does not answer).
extension DeliveryLedger {
    package func settledDeliveries(_ deliveryIDs: [UUID]) async throws -> [LedgerRecord] {
        guard !deliveryIDs.isEmpty else { return [] }
        return try await readAsync("read deliveries to send again") { db in
            try LedgerRecord.fetchAll(db, sql: "SELECT * FROM delivery WHERE deliveryID IN (SELECT value FROM json_each(?))",
                                      arguments: [Self.jsonArray(deliveryIDs)])
        }
    }

    package func declinedDeliveries(bundleIdentifier: String?, limit: Int) async throws -> [LedgerRecord] {
        try await readAsync("read declined deliveries") { db in
            if let bundleIdentifier {
                return try LedgerRecord.fetchAll(db, sql: "SELECT * FROM delivery WHERE bundleIdentifier = ? AND state = 'declined' ORDER BY id LIMIT ?",
                                                 arguments: [bundleIdentifier, limit])
            }
            return try LedgerRecord.fetchAll(db, sql: "SELECT * FROM delivery WHERE state = 'declined' ORDER BY id LIMIT ?", arguments: [limit])
        }
    }

    /// Makes each settled delivery owed again: a new id after every row (so a subscribed handler
    /// is sent it after what it has, as a new `openURL`), its last round kept in `redeliveries`
    /// for its history. Returns the new sequence of each delivery that was settled.
    package func redeliver(_ deliveryIDs: [UUID], at date: Date) async throws -> [UUID: Int64] {
        guard !deliveryIDs.isEmpty else { return [:] }
        let (sequences, owed) = try await writeAsync("send \(deliveryIDs.count) deliveries again") { [self] db in
            var sequences: [UUID: Int64] = [:]
            var owed: [PendingTally.Change] = []
            let find = try db.cachedStatement(sql: """
                SELECT id, state, notifiedAt, notifiedBy, notifiedTo, acknowledgedAt, redeliveries, \(Self.pendingColumns)
                FROM delivery WHERE deliveryID = ? AND state IN ('acknowledged', 'declined')
                """)
            let move = try db.cachedStatement(sql: """
                UPDATE delivery SET id = ?, state = 'committed', acknowledgedAt = NULL, notifiedAt = NULL, notifiedBy = NULL,
                    notifiedTo = NULL, copyRemovedAt = NULL, redeliveries = ?
                WHERE id = ?
                """)
            for deliveryID in deliveryIDs {
                guard let row = try Row.fetchOne(find, arguments: [deliveryID.ledgerText]) else { continue }
                let next = (try Int64.fetchOne(db, sql: """
                    SELECT MAX(COALESCE((SELECT MAX(id) FROM delivery), 0), COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'delivery'), 0))
                    """) ?? 0) + 1
                let state: String = row["state"]
                let round = DocumentHistory.Round(
                    notifiedAt: Date.fromLedger(row["notifiedAt"]), notifiedBy: row["notifiedBy"], notifiedTo: row["notifiedTo"],
                    settled: state == "declined" ? .declined : .acknowledged, settledAt: Date.fromLedger(row["acknowledgedAt"]),
                    redeliveredAt: date)
                var rounds: [JSONValue] = []
                if let text: String = row["redeliveries"], case .array(let values)? = JSONValue(parsingJSON: text) { rounds = values }
                rounds.append(round.json)
                let encoded = String(decoding: try JSONEncoder().encode(JSONValue.array(rounds)), as: UTF8.self)
                try move.execute(arguments: [next, encoded, row["id"] as Int64])
                try db.execute(sql: "UPDATE sqlite_sequence SET seq = ? WHERE name = 'delivery'", arguments: [next])
                committing { $0 = max($0, next) }
                owed.append(Self.pendingChange(row, from: 7, count: 1))
                sequences[deliveryID] = next
            }
            return (sequences, owed)
        }
        pendingTally.record(owed)
        return sequences
    }

    /// The documents matching `query` in the ledger at `path`, opened read-only: the daemon may be
    /// running (a reader never waits for its writer), and nothing here can change the file.
    package static func readHistory(_ query: HistoryQuery, ledgerAt path: String) throws -> [DocumentHistory] {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.label = "DeliveryLedger (read-only)"
        configuration.busyMode = .timeout(5)
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            return try queue.read { db in try history(query, db) }
        } catch {
            throw ledgerError("read the history in \(path)", error)
        }
    }
}
