import Foundation

extension LedgerBackend {
    /// Delivers a package document whole on the delivery pool (see
    /// ``DeliveryBatch/deliverPackage(_:)``), after creating its sandbox if it is a default one.
    public func deliverPackage(_ package: DeliveryBatch.PackageRequest) async -> DocumentDeliveryOutcome {
        prepareContainer(package.containerRoot.string, owner: package.owner.map { (uid: $0.userID, gid: $0.groupID) })
        do {
            let outcome = try await blocking { [batch] in batch.deliverPackage(package) }
            switch outcome {
            case .committed(let record):
                return .committed(deliveryID: record.deliveryID.uuidString.lowercased(), finalPath: record.finalPath ?? "", sequence: record.sequence)
            case .alreadyDelivered(let record):
                return .alreadyDelivered(deliveryID: record.deliveryID.uuidString.lowercased())
            case .failed(let error):
                return .failed(message: "\(error)", retryable: error.isRetryable)
            }
        } catch {
            return .failed(message: "the delivery worker is stopped: \(error)", retryable: true)
        }
    }
}
