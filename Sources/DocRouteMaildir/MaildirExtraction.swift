import DocRouteMail
import SystemPackage

/// What streaming one Maildir message into the scratch folder produced.
package struct MaildirExtraction: Sendable {
    /// What the parser found: envelope, every attachment (wanted or not), problems. When
    /// ``MailSummary/isMalformed`` the message could not be read at all.
    package var summary: MailSummary
    /// The attachments now in temporary files, in message order. The caller owns the files: each is
    /// removed by its delivery, or by ``removeTemporaryFiles(in:)``.
    package var attachments: [MaildirAttachment]
    /// Attachments larger than the size limit: not kept (their temporary files are already removed).
    package var oversized: [MailAttachmentInfo]

    /// Creates an extraction result.
    package init(summary: MailSummary, attachments: [MaildirAttachment], oversized: [MailAttachmentInfo]) {
        self.summary = summary
        self.attachments = attachments
        self.oversized = oversized
    }

    /// Whether nothing in the message can be recovered: it has parts that were damaged and decoded
    /// to no bytes (``MaildirAttachment/isUnrecoverable``), and no other part. The daemon leaves
    /// such a message unread in `new/`; a message with anything recovered moves to `cur/`.
    package var nothingRecoverable: Bool {
        oversized.isEmpty && !attachments.isEmpty && attachments.allSatisfy(\.isUnrecoverable)
    }

    /// Removes the temporary files of the attachments still there (those not delivered); a file
    /// already gone is fine.
    package func removeTemporaryFiles(in scratch: FileDescriptor) {
        for attachment in attachments {
            scratch.removeIfPresent(attachment.temporaryName)
        }
    }
}
