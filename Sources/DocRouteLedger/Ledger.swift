/// The ledger seam: everything docrouted needs of a delivery ledger, as one protocol made of the
/// parts each user needs (docs/ARCHITECTURE.md, "The ledger seam").
///
/// ``DeliveryLedger`` (SQLite, one host) is its implementation today. No signature names SQLite or
/// GRDB, every call takes a batch where a batch exists, and the calls made from async contexts are
/// async, so that a ledger on a database server implements the same protocols without touching
/// delivery, the dispatcher or operations.
package protocol Ledger: BatchLedger, RecoveryLedger, PoisonMarkLedger, RequestLedger, DeliveryStore, LedgerOperations, HistoryLedger,
    RetentionLedger {}
