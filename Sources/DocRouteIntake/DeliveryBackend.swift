/// What intake asks of delivery: the durable half of the daemon, as intake sees it.
///
/// Intake comes before delivery in the flow, so it names only its own types here; the ledger's
/// backend (DocRouteDelivery's `LedgerBackend`) conforms, and the daemon hands it in.
package protocol DeliveryBackend: Sendable {
    /// Hands a batch over to be copied durably (group commit) and recorded, behind the batches
    /// handed over before it; the ticket gives its outcomes once it is committed.
    ///
    /// The backend takes each document's source descriptor and closes it once the document's
    /// outcome is known, before the ticket is fulfilled, whatever the outcome: that is the one
    /// place a delivered source is closed, so intake never closes one it handed over.
    func submit(_ batch: [DocumentDelivery]) -> DeliveryTicket
    /// Copies a package document (a folder delivered whole) durably, records it, then removes
    /// its source tree from the inbox.
    func deliverPackage(_ package: PackageDelivery) async -> DocumentDeliveryOutcome
    /// Before a package is touched: marks it as in hand in the ledger (so that a crash while it
    /// is walked sets it aside at the next start) and says why it must be quarantined instead of
    /// delivered (it stopped the daemon before, or is deeper or larger than the limits), or nil.
    func vetPackage(name: [UInt8], in folder: Int32, path: String) async -> String?
    /// The intake is done with a package (delivered, quarantined or failed): its mark goes.
    func doneWithPackage(path: String) async
    /// Moves a source that cannot be delivered into the quarantine folder with a `.reason` file.
    func quarantine(name: [UInt8], in folder: Int32, mailbox: String, reason: String, origin: String) async throws
    /// The part paths of message `messageID` already delivered into `mailbox` (committed or later).
    func deliveredParts(messageID: String, mailbox: String) async throws -> Set<String>
    /// Notes in the history a mail part no handler took (it stays in its message).
    func noteSkipped(_ part: SkippedPart) async
    /// Returns once the work already handed to the backend (a batch's source removals) is done:
    /// the inbox folders it uses may be closed after that.
    func settle() async
}

extension DeliveryBackend {
    /// Keeps no history (a backend without a ledger, as in tests).
    package func noteSkipped(_ part: SkippedPart) async {}

    /// Copies a batch durably (group commit) and records it; returns once it is committed.
    package func deliver(_ batch: [DocumentDelivery]) async -> [DocumentDeliveryOutcome] {
        await submit(batch).outcomes
    }
}
