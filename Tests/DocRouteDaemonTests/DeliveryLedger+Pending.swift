@testable import DocRoutePlatform
import Foundation
import SystemPackage
import Testing
@testable import DocRouteLedger

extension DeliveryLedger {
    /// The whole records of what a handler is owed, in commit order: the dispatcher's own read
    /// (``pendingEvents(bundleIdentifier:after:limit:)``), each row then read whole, so that a
    /// test checks the query the daemon runs and can still look at any column.
    func pending(bundleIdentifier: String, after sequence: Int64 = 0, limit: Int = 100) throws -> [LedgerRecord] {
        try pendingEvents(bundleIdentifier: bundleIdentifier, after: sequence, limit: limit).map { event in
            let id = try #require(UUID(uuidString: event.deliveryID))
            return try #require(try record(deliveryID: id))
        }
    }
}

extension DeliveryLedger {
    /// One source's earlier delivery, through the batches' own lookup
    /// (``deliveredRecords(forSources:isTakenOut:)``), the source seen still in its inbox.
    func findDelivered(sourceDevice: UInt64, sourceInode: UInt64, sourceSize: Int64, sourceMtimeNs: Int64,
                       sourcePath: FilePath) throws -> LedgerRecord? {
        let status = FileStatus(device: sourceDevice, inode: sourceInode, size: sourceSize, modificationTimeNanoseconds: sourceMtimeNs)
        return try deliveredRecords(forSources: [(status, sourcePath)])[0]
    }
}
