import DocRoutePlatform

/// What became of one ``DocumentDelivery``.
package enum DocumentDeliveryOutcome: Sendable {
    /// Durable in the sandbox and in the ledger; the source is removed.
    case committed(deliveryID: String, finalPath: String, sequence: Int64, size: Int64)
    /// This very source was delivered and committed before (a crash had left it in its inbox);
    /// it was removed now instead of being delivered twice. Nothing new is owed.
    case alreadyDelivered(deliveryID: String)
    /// Not delivered; the source is where it was. The error keeps its code and cause for logs and
    /// status; ``isRetryable`` says whether to try again (a full disk or a permission problem an
    /// administrator can fix), not when the source went away.
    case failed(DeliveryError)
}
