/// One attachment, as known when its part begins (before any of its bytes).
package struct MailAttachmentInfo: Sendable, Hashable {
    /// How the part was marked.
    package enum Disposition: String, Sendable, Hashable {
        /// `Content-Disposition: attachment`.
        case attachment
        /// `Content-Disposition: inline` with a file name.
        case inline
        /// No (or an unknown) disposition, but a file name (`Content-Type: …; name=`).
        case unspecified
    }

    /// The part's path as IMAP numbers it (`1`, `2.1`, `3.1.2`): stable for a given message, so it
    /// identifies the attachment across runs (with the Message-ID).
    package var partPath: String
    /// The file name made safe: never empty, never a path, no control characters (``AttachmentFileName``).
    package var fileName: String
    /// The file name as the mail gave it, decoded but not made safe; nil when the part had none.
    /// Data for display and annotations, never for a path.
    package var originalFileName: String?
    /// The part's `Content-Type` without parameters, lowercased (`application/pdf`): a hint for typing.
    /// When the part has no `Content-Type`, RFC 2045's default as Python's `email` gives it
    /// (`text/plain`; ``mimeTypeIsDefault``); `application/octet-stream` when the header is malformed.
    package var mimeType: String
    /// Whether ``mimeType`` is only the default of a part without `Content-Type`: the mail said
    /// nothing of the type, so typing takes no hint from it.
    package var mimeTypeIsDefault: Bool
    /// The part's disposition.
    package var disposition: Disposition
    /// The part's `Content-Transfer-Encoding`, lowercased (`base64`, `quoted-printable`, `7bit`).
    package var transferEncoding: String
    /// The envelope of the message being parsed (the outermost one).
    package var message: MailEnvelope
    /// For a part inside a forwarded message (`message/rfc822`), the envelope of the innermost
    /// message holding it; nil for parts of the outer message.
    package var enclosingMessage: MailEnvelope?

    /// Creates an attachment description.
    package init(
        partPath: String, fileName: String, originalFileName: String?, mimeType: String, disposition: Disposition,
        transferEncoding: String, message: MailEnvelope, enclosingMessage: MailEnvelope?, mimeTypeIsDefault: Bool = false
    ) {
        self.mimeTypeIsDefault = mimeTypeIsDefault
        self.partPath = partPath
        self.fileName = fileName
        self.originalFileName = originalFileName
        self.mimeType = mimeType
        self.disposition = disposition
        self.transferEncoding = transferEncoding
        self.message = message
        self.enclosingMessage = enclosingMessage
    }
}
