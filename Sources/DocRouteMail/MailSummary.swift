/// What parsing one message found: its envelope, its attachments and its problems.
package struct MailSummary: Sendable, Hashable {
    /// The message's own header (empty fields when it had none).
    package var envelope: MailEnvelope
    /// Whether the message is MIME (a `MIME-Version`, `Content-Type` or `Content-Transfer-Encoding`
    /// field). A message that is not has no attachments.
    package var isMIME: Bool
    /// Every attachment found, in order, whether wanted or not.
    package var attachments: [MailAttachmentRecord]
    /// What was wrong, in the order found (at most ``MailParser/Limits/maximumProblems``).
    package var problems: [MailProblem]
    /// How many bytes of input were read.
    package var byteCount: Int64

    /// Whether the message could not be read at all (empty, no header, a header over the limit):
    /// leave it where it is and report it.
    package var isMalformed: Bool { problems.contains { $0.isFatal } }
}
