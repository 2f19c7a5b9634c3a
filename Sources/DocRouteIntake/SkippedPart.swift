/// A mail part that no handler took, for the message's history (``DeliveryBackend/noteSkipped(_:)``).
package struct SkippedPart: Sendable, Hashable {
    /// The message file in its Maildir.
    package var messagePath: String
    package var messageID: String
    package var partPath: String
    package var fileName: String
    package var mailbox: String
    package var size: Int64?
    /// Its Uniform Type Identifier, when it was typed.
    package var contentType: String?
    package var reason: String

    package init(messagePath: String, messageID: String, partPath: String, fileName: String, mailbox: String,
                 size: Int64?, contentType: String?, reason: String) {
        self.messagePath = messagePath
        self.messageID = messageID
        self.partPath = partPath
        self.fileName = fileName
        self.mailbox = mailbox
        self.size = size
        self.contentType = contentType
        self.reason = reason
    }
}
