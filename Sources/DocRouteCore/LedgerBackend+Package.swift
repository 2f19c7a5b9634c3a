import Foundation

extension LedgerBackend {
    /// Delivers a package document whole on the delivery pool (see
    /// ``DeliveryBatch/deliverPackage(_:)``), after creating its sandbox if it is a default one.
    public func deliverPackage(_ package: DeliveryBatch.PackageRequest) async -> DocumentDeliveryOutcome {
        prepareContainer(package.containerRoot.string, owner: package.owner.map { (uid: $0.userID, gid: $0.groupID) })
        do {
            return DocumentDeliveryOutcome(try await blocking { [batch] in batch.deliverPackage(package) })
        } catch {
            return .failed(message: "the delivery worker is stopped: \(error)", retryable: true)
        }
    }
}
