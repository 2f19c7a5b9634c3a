import Foundation

/// What intake and the request handlers need of a ledger beside batches (through
/// ``DeliveryBackend``, which intake defines): which parts of a mail message were delivered,
/// and a custom-scheme URL recorded for its handler.
///
/// Async: these are asked from the event loops' tasks, one at a time, and must not block them.
package protocol RequestLedger: AnyObject, Sendable {
    /// The part paths of message `messageID` delivered into `mailbox` (committed or later), so a
    /// message read again after a crash skips what is done.
    func deliveredParts(ofMessage messageID: String, mailbox: String) async throws -> Set<String>
    /// Records a custom-scheme URL for `bundleIdentifier`, committed at once; `requesterUID` is
    /// the uid whose `open` asked for it, when its pending deliveries are limited.
    func recordURLDelivery(_ url: String, bundleIdentifier: String, sourceApplication: String?,
                           requesterUID: UInt32?, at date: Date) async throws -> LedgerRecord
}
