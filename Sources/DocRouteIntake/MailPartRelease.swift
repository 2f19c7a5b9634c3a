import DocRouteProtocol

/// What became of a request to deliver a quarantined mail part from its message
/// (``IntakePipeline/releaseMailPart(entryPath:pick:)``).
package enum MailPartRelease: Sendable {
    /// The part was delivered and committed; its entry is removed.
    case delivered(deliveryID: String, bundleIdentifier: String, contentType: String, entry: QuarantinedMailPart)
    /// The ledger has the part delivered already (the message was read again once a handler
    /// claimed it); its entry is removed.
    case alreadyDelivered(QuarantinedMailPart)
    /// Nothing was delivered; the entry stays. `code` is the wire error, `message` says what to do.
    case refused(code: ErrorCode, message: String)
}
