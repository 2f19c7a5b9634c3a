import DocRouteLedger
import DocRoutePlatform
import Foundation
import SystemPackage

extension LedgerBackend {
    /// The most declined deliveries one `redeliver --declined` sends again.
    static let redeliveryLimit = 10_000

    /// Sends acknowledged or declined deliveries to their handlers again (`deliveryIDs`, or every
    /// declined one, of `bundleIdentifier` when given): each whose copy is still in the sandbox
    /// (the same file: device and inode as committed) is made owed again; the caller tells the
    /// dispatcher of the handlers in `bundles`.
    package func redeliver(_ deliveryIDs: [String], declinedOf bundleIdentifier: String?, declined: Bool)
        async throws -> (results: [Redelivery], bundles: Set<String>)
    {
        var results: [Redelivery] = []
        var records: [LedgerRecord] = []
        if declined {
            records = try await ledger.declinedDeliveries(bundleIdentifier: bundleIdentifier, limit: Self.redeliveryLimit)
        } else {
            var ids: [UUID] = []
            for text in deliveryIDs {
                guard let id = UUID(uuidString: text) else {
                    results.append(Redelivery(deliveryID: text, outcome: .unknown, message: "\(text) is not a delivery id (a UUID, as docroutectl history prints it)"))
                    continue
                }
                ids.append(id)
            }
            let found = try await ledger.settledDeliveries(ids)
            let byID = Dictionary(found.map { ($0.deliveryID, $0) }, uniquingKeysWith: { first, _ in first })
            for (text, id) in zip(deliveryIDs.filter { UUID(uuidString: $0) != nil }, ids) {
                guard let record = byID[id] else {
                    results.append(Redelivery(deliveryID: text, outcome: .unknown, message: "no delivery \(text) in the ledger (its history may have been pruned after history_days)"))
                    continue
                }
                records.append(record)
            }
        }
        var sendAgain: [UUID] = []
        var pending: [UUID: Redelivery] = [:]
        for record in records {
            let text = record.deliveryID.protocolText
            guard record.state == .acknowledged || record.state == .declined else {
                results.append(Redelivery(deliveryID: text, outcome: .notSettled, bundleIdentifier: record.bundleIdentifier, path: record.finalPath,
                                          message: "\(text) is not acknowledged or declined yet: \(record.bundleIdentifier) is still owed it and is sent it when it subscribes"))
                continue
            }
            guard record.kind == .file, let path = record.finalPath else {
                results.append(Redelivery(deliveryID: text, outcome: .url, bundleIdentifier: record.bundleIdentifier,
                                          message: "\(text) is a URL delivery with no copy to send again; open the URL again (docroutectl open)"))
                continue
            }
            let status = try? FilePath(path).status(followingSymbolicLinks: false)
            guard let status, status.isRegularFile,
                  record.finalInode == nil || (status.device == record.finalDevice && status.inode == record.finalInode) else {
                results.append(Redelivery(deliveryID: text, outcome: .copyGone, bundleIdentifier: record.bundleIdentifier, path: path,
                                          message: "the copy \(path) is gone from \(record.bundleIdentifier)'s sandbox (removed by the handler or by retention); drop the original into an inbox again"))
                continue
            }
            sendAgain.append(record.deliveryID)
            pending[record.deliveryID] = Redelivery(deliveryID: text, outcome: .redelivered, bundleIdentifier: record.bundleIdentifier, path: path,
                                                    message: "\(text) (\(record.originalName ?? path)) is sent to \(record.bundleIdentifier) again, naming \(path)")
        }
        let sequences = try await ledger.redeliver(sendAgain, at: Date())
        var bundles: Set<String> = []
        for id in sendAgain {
            guard var result = pending[id] else { continue }
            if sequences[id] == nil {
                // Settled meanwhile only in the other direction: made owed by another redeliver.
                result.outcome = .notSettled
                result.message = "\(result.deliveryID) is owed already: it was sent again meanwhile"
            } else if let bundle = result.bundleIdentifier {
                bundles.insert(bundle)
                logger.notice("delivery sent again", metadata: ["delivery-id": "\(result.deliveryID.lowercased())", "bundle-id": "\(bundle)", "path": "\(result.path ?? "")"])
            }
            results.append(result)
        }
        return (results, bundles)
    }
}
