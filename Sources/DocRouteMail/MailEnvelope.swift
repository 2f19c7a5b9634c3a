/// What a message says about itself in its header: who sent it, about what, its identifier and date,
/// decoded to text (RFC 2047 words decoded, folding undone, surrounding whitespace trimmed).
package struct MailEnvelope: Sendable, Hashable {
    /// `From`, e.g. `Zoë Example <zoe@example.org>`.
    package var from: String?
    /// `Subject`.
    package var subject: String?
    /// `Message-ID` as written, angle brackets included (`<abc@example.org>`).
    package var messageID: String?
    /// `Date` as written (`Tue, 1 Apr 2025 10:00:00 +0200`).
    package var date: String?

    /// Creates an envelope.
    package init(from: String? = nil, subject: String? = nil, messageID: String? = nil, date: String? = nil) {
        self.from = from
        self.subject = subject
        self.messageID = messageID
        self.date = date
    }
}
