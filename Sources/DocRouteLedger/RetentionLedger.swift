import Foundation

/// What the inbox retention sweep needs of a ledger: the acknowledged copies past their time, a
/// page at a time, and a note of those settled (``InboxRetention`` in delivery).
package protocol RetentionLedger: AnyObject, Sendable {
    /// A page of acknowledged file deliveries of `bundleIdentifier`, acknowledged before `cutoff`,
    /// whose copies no sweep has settled yet, oldest acknowledgement first, starting past
    /// `position` (nil: from the first); `next` is where the following page starts, nil after the
    /// last.
    func acknowledgedCopies(of bundleIdentifier: String, acknowledgedBefore cutoff: Date, after position: RetentionPosition?,
                            limit: Int) throws -> (copies: [AcknowledgedCopy], next: RetentionPosition?)
    /// Notes that these deliveries' copies are settled (removed, or found gone or replaced).
    func markCopiesSettled(_ deliveryIDs: [UUID], at date: Date) throws
}
