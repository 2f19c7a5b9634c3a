/// One attachment found in a message, after its last byte.
package struct MailAttachmentRecord: Sendable, Hashable {
    /// What was known when it began.
    package var info: MailAttachmentInfo
    /// Whether the sink wanted its bytes (its answer to ``AttachmentSink/beginAttachment(_:)``).
    package var wanted: Bool
    /// Decoded size in bytes; 0 when it was not wanted (its bytes were skipped, not decoded).
    package var size: Int64
    /// What was wrong with it.
    package var damage: AttachmentDamage
    /// For an attached message (a `message/rfc822` part, not encoded), where its bytes are in the
    /// input, as absolute offsets: exactly the message as it was attached. Nil for other attachments.
    package var byteRange: Range<Int64>?

    /// Creates a record.
    package init(info: MailAttachmentInfo, wanted: Bool, size: Int64, damage: AttachmentDamage, byteRange: Range<Int64>? = nil) {
        self.info = info
        self.wanted = wanted
        self.size = size
        self.damage = damage
        self.byteRange = byteRange
    }

    /// Whether this is an attached message whose bytes the parser located rather than decoded.
    package var isAttachedMessage: Bool { byteRange != nil }
}
