/// Receives the attachments of a message as ``MailParser`` decodes them, one at a time, in order.
///
/// For each attachment: ``beginAttachment(_:)`` once, then ``attachmentBytes(_:)`` any number of times
/// (each call at most a few hundred KiB: nothing is held whole), then ``endAttachment(_:size:damage:)``.
/// An error thrown from any method stops the parser: it is rethrown from `feed`/`finish` and the
/// parser takes no more input.
package protocol AttachmentSink: AnyObject {
    /// An attachment starts; return false to skip it (its bytes are then not decoded, and
    /// ``endAttachment(_:size:damage:)`` is not called for it).
    func beginAttachment(_ info: MailAttachmentInfo) throws -> Bool
    /// The next decoded bytes of the current attachment. Valid only during the call.
    func attachmentBytes(_ bytes: UnsafeRawBufferPointer) throws
    /// The current attachment is complete: `size` decoded bytes, with `damage` (empty when none).
    func endAttachment(_ info: MailAttachmentInfo, size: Int64, damage: AttachmentDamage) throws
    /// An attached message (a `message/rfc822` part that is not encoded) ended: its bytes, exactly
    /// as they are in the input, are at `range` (absolute offsets of what was fed). Return whether
    /// it was taken. The parser does not pass these bytes itself: they hold the bytes of the
    /// attachments inside that message, which are decoded and passed as usual (between this
    /// message's start and this call), so a sink that can read the input again copies the range.
    /// `info.fileName` ends in `.eml`. Called after the attachments inside it, innermost first.
    func attachedMessage(_ info: MailAttachmentInfo, bytes range: Range<Int64>, damage: AttachmentDamage) throws -> Bool
}

extension AttachmentSink {
    /// By default attached messages are not taken (only listed in the ``MailSummary``).
    package func attachedMessage(_ info: MailAttachmentInfo, bytes range: Range<Int64>, damage: AttachmentDamage) throws -> Bool {
        false
    }
}
