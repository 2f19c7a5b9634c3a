import Foundation

/// Intake's and the requests' part of the seam (``RequestLedger``), on the SQLite ledger.
extension DeliveryLedger {
    package func deliveredParts(ofMessage messageID: String, mailbox: String) async throws -> Set<String> {
        try await readAsync("look up a message's delivered attachments") { [self] db in
            try deliveredParts(messageID: messageID, mailbox: mailbox, db)
        }
    }

    package func recordURLDelivery(_ url: String, bundleIdentifier: String, sourceApplication: String?,
                                   requesterUID: UInt32?, at date: Date) async throws -> LedgerRecord {
        var record = LedgerRecord(
            deliveryID: UUID(), bundleIdentifier: bundleIdentifier, kind: .url, url: url,
            sourceApplication: sourceApplication, state: .committed,
            createdAt: date, committedAt: date, requesterUID: requesterUID)
        let (sequence, owed) = try await writeAsync("record a URL delivery") { [record] db in
            var owed: [PendingTally.Change] = []
            try Self.insert([record], db)
            let sequence = try Self.commit([record.deliveryID], db, at: date, owed: &owed)[record.deliveryID] ?? 0
            return (sequence, owed)
        }
        pendingTally.record(owed)
        record.sequence = sequence
        return record
    }
}
