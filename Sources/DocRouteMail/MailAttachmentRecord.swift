/// One attachment found in a message, after its last byte.
public struct MailAttachmentRecord: Sendable, Hashable {
    /// What was known when it began.
    public var info: MailAttachmentInfo
    /// Whether the sink wanted its bytes (its answer to ``AttachmentSink/beginAttachment(_:)``).
    public var wanted: Bool
    /// Decoded size in bytes; 0 when it was not wanted (its bytes were skipped, not decoded).
    public var size: Int64
    /// What was wrong with it.
    public var damage: AttachmentDamage
}
