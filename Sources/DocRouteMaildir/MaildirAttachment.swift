import DocRouteMail
import DocRouteProtocol

/// One attachment of a Maildir message, decoded into a temporary file of the scratch folder and
/// ready to be typed and delivered like a file dropped in an inbox.
package struct MaildirAttachment: Sendable, Hashable {
    /// The temporary file's name in the scratch folder (`.docroute-mail-<random>-<part>`): open it
    /// there with ``IntakeFile/open(name:in:maxSize:headLength:)``; delivery removes it once copied.
    package var temporaryName: String
    /// The scratch folder's path and ``temporaryName``, for logs and the ledger.
    package var temporaryPath: String
    /// The safe file name to type and deliver under (``AttachmentFileName``).
    package var fileName: String
    /// The part's `Content-Type` without parameters (`application/pdf`): the MIME hint for typing
    /// (``MailAttachmentInfo/mimeType``).
    package var mimeType: String
    /// Whether the part had no `Content-Type` (``mimeType`` is RFC 2045's default): no hint then.
    package var mimeTypeIsDefault: Bool
    /// Decoded size in bytes (the temporary file's size).
    package var size: Int64
    /// The IMAP part path (`2`, `3.1`): with the Message-ID, the attachment's identity across runs.
    package var partPath: String
    /// What was wrong with the part (empty when nothing was).
    package var damage: AttachmentDamage
    /// The message's envelope (the outer message, also for parts of a forwarded one).
    package var envelope: MailEnvelope
    /// For a part of a forwarded message, that message's envelope.
    package var enclosingMessage: MailEnvelope?
    /// The file name as the mail gave it (decoded, not made safe), or ``fileName`` when it gave none.
    package var originalFilename: String

    /// Creates an attachment description.
    package init(
        temporaryName: String, temporaryPath: String, fileName: String, mimeType: String, size: Int64,
        partPath: String, damage: AttachmentDamage, envelope: MailEnvelope, enclosingMessage: MailEnvelope?,
        originalFilename: String, mimeTypeIsDefault: Bool = false
    ) {
        self.mimeTypeIsDefault = mimeTypeIsDefault
        self.temporaryName = temporaryName
        self.temporaryPath = temporaryPath
        self.fileName = fileName
        self.mimeType = mimeType
        self.size = size
        self.partPath = partPath
        self.damage = damage
        self.envelope = envelope
        self.enclosingMessage = enclosingMessage
        self.originalFilename = originalFilename
    }

    /// The MIME type typing takes as a hint: the part's own, none when it gave none.
    package var mimeHint: String? { mimeTypeIsDefault ? nil : mimeType }

    /// Whether nothing of the part could be recovered: it was damaged and decoded to no bytes. Such a
    /// part is not delivered (an empty file helps nobody); a damaged part with bytes is, flagged.
    package var isUnrecoverable: Bool { size == 0 && !damage.isEmpty }

    /// The annotation values the mail contributes: `from`, `subject`, `messageID`, `date` (each only
    /// when the message has it), `originalFilename` and `partPath`. The intake adds `mailbox` and `size`.
    package var annotation: [String: PropertyListValue] {
        var values: [String: PropertyListValue] = [
            "originalFilename": .string(originalFilename),
            "partPath": .string(partPath),
        ]
        if let from = envelope.from { values["from"] = .string(from) }
        if let subject = envelope.subject { values["subject"] = .string(subject) }
        if let messageID = envelope.messageID { values["messageID"] = .string(messageID) }
        if let date = envelope.date { values["date"] = .string(date) }
        return values
    }
}
