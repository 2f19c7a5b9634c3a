/// Receives the attachments of a message as ``MailParser`` decodes them, one at a time, in order.
///
/// For each attachment: ``beginAttachment(_:)`` once, then ``attachmentBytes(_:)`` any number of times
/// (each call at most a few hundred KiB: nothing is held whole), then ``endAttachment(_:size:damage:)``.
/// An error thrown from any method stops the parser: it is rethrown from `feed`/`finish` and the
/// parser takes no more input.
public protocol AttachmentSink: AnyObject {
    /// An attachment starts; return false to skip it (its bytes are then not decoded, and
    /// ``endAttachment(_:size:damage:)`` is not called for it).
    func beginAttachment(_ info: MailAttachmentInfo) throws -> Bool
    /// The next decoded bytes of the current attachment. Valid only during the call.
    func attachmentBytes(_ bytes: UnsafeRawBufferPointer) throws
    /// The current attachment is complete: `size` decoded bytes, with `damage` (empty when none).
    func endAttachment(_ info: MailAttachmentInfo, size: Int64, damage: AttachmentDamage) throws
}
