import DocRouteIntake

extension DocumentDeliveryOutcome {
    /// The daemon's view of what the delivery batch did with one request.
    init(_ outcome: DeliveryBatch.Outcome) {
        switch outcome {
        case .committed(let record):
            self = .committed(deliveryID: record.deliveryID.protocolText, finalPath: record.finalPath ?? "",
                              sequence: record.sequence, size: record.size ?? 0)
        case .alreadyDelivered(let record):
            self = .alreadyDelivered(deliveryID: record.deliveryID.protocolText)
        case .failed(let error):
            self = .failed(error)
        }
    }
}
