import DocRoutePlatform
import Foundation
import SystemPackage

/// What a delivery batch needs of a ledger (``DeliveryBatch`` in DocRouteDelivery: files,
/// packages, and recovery's commits), step by step: stage the rows, name a copy again, commit or
/// discard them, find a source delivered before, note sources taken out of their inboxes.
///
/// Each call takes a whole batch, so an implementation writes once per batch, not per row.
///
/// Synchronous on purpose: a batch runs on a thread that may block, and its ledger writes sit
/// between disk flushes they must be ordered with (a row is staged after the copies are durable,
/// committed after the renames are; a source leaves its inbox only after its commit is durable).
/// Each call returns once its write is durable. An implementation over a network blocks that
/// thread on the answer (postgres-nio's futures may be waited on off their event loop), which is
/// what the batch thread is for.
package protocol BatchLedger: AnyObject, Sendable {
    /// Records the rows of a batch, state `staged`, durably, in one write.
    func stage(_ records: [LedgerRecord]) throws
    /// A staged row's final name changed (the name was taken meanwhile); written before the
    /// rename to it is tried, so a crash never leaves the row naming another file.
    func updateFinalPath(deliveryID: UUID, finalPath: String) throws
    /// Commits the staged rows `deliveryIDs` (in that order) and removes the rows `discarding`,
    /// in one write. Returns each committed id's sequence, increasing in commit order for as long
    /// as the ledger lives; a row that is gone or was committed before is left out.
    func commit(_ deliveryIDs: [UUID], discarding: [UUID], at date: Date) throws -> [UUID: Int64]
    /// Removes staged rows (their copies were not placed).
    func discard(_ deliveryIDs: [UUID]) throws
    /// The committed (or later) deliveries of exactly these sources (device, inode, size,
    /// modification time and path) whose removal from their inboxes was never noted, by index
    /// into `sources`; for a source that `isTakenOut`, one whose removal was noted counts too.
    /// What a batch asks before it delivers, so a source a crash left behind is removed, not
    /// delivered twice.
    func deliveredRecords(forSources sources: [(status: FileStatus, path: FilePath)],
                          isTakenOut: (Int) -> Bool) throws -> [Int: LedgerRecord]
    /// Notes that the sources of these deliveries are gone from their inboxes. Unless `durably`,
    /// the note may ride on the next durable write: losing it costs only a check at the next start.
    func markSourcesRemoved(_ deliveryIDs: [UUID], at date: Date, durably: Bool) throws
    /// Checks that the ledger written to is still the one in use (not removed or replaced under
    /// the daemon); sources are taken out of their inboxes only after this.
    /// - Throws: ``DeliveryError`` `ledger-damaged`.
    func confirmInPlace() throws
}

extension BatchLedger {
    /// Commits `deliveryIDs`, removing no row.
    package func commit(_ deliveryIDs: [UUID], at date: Date = Date()) throws -> [UUID: Int64] {
        try commit(deliveryIDs, discarding: [], at: date)
    }

    /// The deliveries of `sources`, every source seen still in its inbox.
    package func deliveredRecords(forSources sources: [(status: FileStatus, path: FilePath)]) throws -> [Int: LedgerRecord] {
        try deliveredRecords(forSources: sources, isTakenOut: { _ in false })
    }

    /// Notes removed sources now, without a flush of their own.
    package func markSourcesRemoved(_ deliveryIDs: [UUID], at date: Date = Date()) throws {
        try markSourcesRemoved(deliveryIDs, at: date, durably: false)
    }
}
