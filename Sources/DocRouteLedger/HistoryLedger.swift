import Foundation

/// What a document's history needs of a ledger: the events of every document that came in, kept
/// for `history_days`, and found again by delivery id, name, path, handler, time or state
/// (docs/ARCHITECTURE.md, "The ledger seam").
///
/// A delivery's events are the columns of its one row (seen, typed, routed, committed, notified,
/// acknowledged, source reclaimed), written by the same per-batch statements as the delivery;
/// a document that never became a delivery (quarantined, a mail part skipped) is noted here.
///
/// Async: asked by requests and by the pruning task, never on the batch thread.
package protocol HistoryLedger: AnyObject, Sendable {
    /// The documents that match every condition of `query`, newest first, at most its limit.
    func history(_ query: HistoryQuery) async throws -> [DocumentHistory]
    /// Notes documents that never became a delivery (a quarantined file, a skipped mail part),
    /// all in one write.
    func noteUndelivered(_ notes: [UndeliveredDocument]) async throws
    /// Removes the history of documents settled before `date` (acknowledged or declined with
    /// their sources gone, quarantined, skipped), at most `limit` of them; returns how many went.
    /// What a handler is still owed, and what recovery may still need, is never removed.
    func pruneHistory(before date: Date, limit: Int) async throws -> Int
    /// The deliveries with these ids, in any state.
    func settledDeliveries(_ deliveryIDs: [UUID]) async throws -> [LedgerRecord]
    /// The declined deliveries (of one handler, when given), oldest first, at most `limit`.
    func declinedDeliveries(bundleIdentifier: String?, limit: Int) async throws -> [LedgerRecord]
    /// Makes these acknowledged or declined deliveries owed again, after everything committed so
    /// far, keeping their last round in their history; returns the new sequence of each one that
    /// was settled (others are left alone).
    func redeliver(_ deliveryIDs: [UUID], at date: Date) async throws -> [UUID: Int64]
}
