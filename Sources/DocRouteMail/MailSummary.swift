/// What parsing one message found: its envelope, its attachments and its problems.
public struct MailSummary: Sendable, Hashable {
    /// The message's own header (empty fields when it had none).
    public var envelope: MailEnvelope
    /// Whether the message is MIME (a `MIME-Version`, `Content-Type` or `Content-Transfer-Encoding`
    /// field). A message that is not has no attachments.
    public var isMIME: Bool
    /// Every attachment found, in order, whether wanted or not.
    public var attachments: [MailAttachmentRecord]
    /// What was wrong, in the order found (at most ``MailParser/Limits/maximumProblems``).
    public var problems: [MailProblem]
    /// How many bytes of input were read.
    public var byteCount: Int64

    /// Whether the message could not be read at all (empty, no header, a header over the limit):
    /// leave it where it is and report it.
    public var isMalformed: Bool { problems.contains { $0.isFatal } }
}
