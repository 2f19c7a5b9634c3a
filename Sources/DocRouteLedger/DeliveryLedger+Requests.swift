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
        let (sequence, owed) = try await writeAsync("record a URL delivery") { [self, record] db in
            var owed: [PendingTally.Change] = []
            let sequence = try insertCommitted(record, db, owed: &owed)
            return (sequence, owed)
        }
        pendingTally.record(owed)
        record.sequence = sequence
        return record
    }
}
