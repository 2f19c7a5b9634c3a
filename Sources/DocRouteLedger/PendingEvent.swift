/// What the dispatcher needs of a committed, unacknowledged delivery to send its `openURL`: the
/// columns of its ``LedgerRecord`` that go into the event, read by position.
///
/// The dispatcher reads these once per quarter window for as long as a burst lasts; reading whole
/// records (29 columns looked up by name, four dates parsed from text) was 5% of the daemon's time.
package struct PendingEvent: Sendable, Equatable {
    package var sequence: Int64
    /// As the ledger stores it (a UUID's `uuidString`).
    package var deliveryID: String
    package var kind: LedgerRecord.Kind
    package var url: String?
    package var finalPath: String?
    package var contentType: String?
    package var mailbox: String?
    package var sourceApplication: String?
    /// JSON, as ``LedgerRecord/annotation``.
    package var annotation: String?

    /// The columns, in the order ``DeliveryLedger/pendingEvents(bundleIdentifier:after:limit:)`` reads them.
    static let columns = "id, deliveryID, kind, url, finalPath, contentType, mailbox, sourceApplication, annotation"
}
