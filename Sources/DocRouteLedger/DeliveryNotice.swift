import Foundation

/// That a handler was told of a delivery, for its history: written in bulk with the
/// acknowledgements (``DeliveryStore/acknowledge(_:notices:)``).
package struct DeliveryNotice: Sendable, Hashable {
    /// How the handler was told.
    package enum Message: String, Sendable, Hashable {
        /// The first event on a subscription.
        case launch
        /// Every event after it.
        case openURL
    }

    package var deliveryID: String
    /// The delivery's sequence, as ``OwedDelivery`` gave it.
    package var sequence: Int64
    package var message: Message
    /// Which connection: its number and its peer's pid and uid.
    package var connection: String
    package var at: Date

    package init(deliveryID: String, sequence: Int64, message: Message, connection: String, at: Date) {
        self.deliveryID = deliveryID
        self.sequence = sequence
        self.message = message
        self.connection = connection
        self.at = at
    }
}
