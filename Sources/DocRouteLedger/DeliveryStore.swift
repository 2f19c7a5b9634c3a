import DocRouteProtocol

/// A committed delivery still owed to its handler, in commit order.
package struct OwedDelivery: Sendable, Hashable {
    /// The commit order; per handler, events go out in increasing sequence.
    package var sequence: Int64
    package var event: DocumentEvent

    package init(sequence: Int64, event: DocumentEvent) {
        self.sequence = sequence
        self.event = event
    }
}

/// A handler's answer to one event.
package struct DeliveryAcknowledgement: Sendable, Hashable {
    package var deliveryID: String
    package var bundleIdentifier: String
    package var handled: Bool

    package init(deliveryID: String, bundleIdentifier: String, handled: Bool) {
        self.deliveryID = deliveryID
        self.bundleIdentifier = bundleIdentifier
        self.handled = handled
    }
}

/// What the dispatcher needs of the ledger: the source of truth for what each handler is owed.
package protocol DeliveryStore: Sendable {
    /// Committed, unacknowledged deliveries of one handler after `sequence`, oldest first.
    func owed(bundleIdentifier: String, afterSequence sequence: Int64, limit: Int) async throws -> [OwedDelivery]
    /// How many deliveries the handler is owed.
    func owedCount(bundleIdentifier: String) async throws -> Int
    /// Records acknowledgements, and which deliveries their handlers were told of (for their
    /// history), durably, in one transaction for the batch.
    func acknowledge(_ acknowledgements: [DeliveryAcknowledgement], notices: [DeliveryNotice]) async throws
}

extension DeliveryStore {
    /// Records acknowledgements durably (one transaction for the batch).
    package func acknowledge(_ acknowledgements: [DeliveryAcknowledgement]) async throws {
        try await acknowledge(acknowledgements, notices: [])
    }
}
