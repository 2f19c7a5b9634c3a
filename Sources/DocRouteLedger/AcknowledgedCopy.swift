import Foundation

/// A copy in a handler's sandbox that its handler acknowledged, as the ledger recorded it
/// when it was delivered: what a retention sweep may remove, and how to tell it is still
/// that very file.
package struct AcknowledgedCopy: Sendable, Hashable {
    package var deliveryID: UUID
    /// The handler's container root the copy was written below.
    package var containerPath: String
    /// The copy's absolute path, `<containerPath>/Documents/Inbox/<mailbox>/<name>`.
    package var finalPath: String
    /// Device and inode of the copy when it was renamed into place; nil in a row that never
    /// recorded them, which a sweep then leaves alone.
    package var finalDevice: UInt64?
    package var finalInode: UInt64?
    /// Bytes, for the log.
    package var size: Int64?
    package var acknowledgedAt: Date
}
