import DocRouteHandlers
import DocRouteMaildir
import DocRouteTypes

/// Where one attachment of a message goes: its scratch file open, how it is typed and the handler
/// that claims it. The daemon and `docroutectl mail inspect` both decide through ``route(_:scratch:engine:selector:)``,
/// so what the tool shows is what the daemon does.
package struct MaildirAttachmentRoute {
    /// The scratch file, open (its `head` read); the caller closes `file.descriptor`.
    package var file: IntakeFile
    /// The type: from the safe file name, the first bytes and the part's `Content-Type` as a hint.
    package var classification: TypeClassification
    /// The handler that gets it; nil when no handler claims the type (the attachment is skipped).
    package var handler: RegisteredHandler?

    /// Opens `attachment`'s scratch file in `scratch`, types it and picks its handler; nil when the
    /// scratch file is gone.
    package static func route(_ attachment: MaildirAttachment, scratch: Int32, engine: TypeEngine, selector: HandlerSelector) -> MaildirAttachmentRoute? {
        guard case .success(let file) = IntakeFile.open(name: Array(attachment.temporaryName.utf8), in: scratch, maxSize: .max) else {
            return nil
        }
        let classification = engine.classify(filename: attachment.fileName, head: file.head, mimeHint: attachment.mimeHint)
        let handler = selector.chooseHandler(contentType: classification.contentType, innerContentType: classification.innerContentType)
        return MaildirAttachmentRoute(file: file, classification: classification, handler: handler)
    }
}
