import DocRoutePlatform
import DocRouteProtocol
import Foundation

/// One document to copy into a handler's sandbox, already opened, typed and routed.
///
/// The one shape of a request from intake to the copy: delivery's batch takes it as it is
/// (`DeliveryBatch.Request`), reading the descriptor and the `fstat` status that ``source`` carries,
/// and adds only views of these fields (DocRouteDelivery's `DocumentDelivery+Batch.swift`).
package struct DocumentDelivery: Sendable {
    /// The delivery's id (sent to the handler; never changes).
    package var deliveryID: UUID
    /// The opened source; its head, read for typing, is not kept. Once handed to a
    /// ``DeliveryBackend`` its descriptor is the backend's to close (see ``DeliveryBackend/submit(_:)``).
    package var source: IntakeFile
    /// Where the source lives, to remove it once its copy is durable (kept open until then); nil to
    /// leave it (an `open` of a client's own file copies it and never touches the original).
    package var sourceFolder: DirectoryHandle?
    package var sourceName: [UInt8]
    /// The source's path, for the ledger and logs.
    package var sourcePath: String
    package var containerRoot: String
    package var mailbox: String
    package var extensionChain: String
    package var contentType: String
    package var bundleIdentifier: String
    /// Owner of the copy (uid, gid); nil keeps the daemon's.
    package var owner: (uid: UInt32, gid: UInt32)?
    package var sourceApplication: String
    /// Entries beyond `mailbox`, `originalFilename` and `size`, which the delivery adds itself
    /// (an `originalFilename` given here wins: a mail part's name as the mail spelled it).
    package var annotation: [String: PropertyListValue]
    /// The name the copy takes (before the name rule); nil for the source's own name. A mail
    /// attachment's source is a scratch file, so its safe file name comes from here.
    package var fileName: String?
    /// For a mail attachment: the message's key (its Message-ID) and the part, so a restart after a
    /// crash never delivers the same part twice.
    package var messageID: String?
    package var partPath: String?
    /// The uid whose `open` asked for it, when that uid's pending deliveries are limited
    /// (`max_pending_per_uid`); nil for an inbox's file.
    package var requesterUID: UInt32?
    /// For its history: when intake saw it (opened, typed and routed it), the inbox it came
    /// from, its MIME type, how its type was decided, and why it goes to its handler.
    package var seenAt = Date()
    package var inbox: String?
    package var mimeType: String?
    package var typedBy: String?
    package var routedBy: String?

    /// The document's name as it came, for logs: a mail part's name as the mail spelled it, else
    /// the name the copy starts from, else the source's.
    package var originalName: String {
        if case .string(let name)? = annotation["originalFilename"] { return name }
        return fileName ?? InboxNames.display(sourceName)
    }

    package init(deliveryID: UUID = .random(), source: IntakeFile, sourceFolder: DirectoryHandle?, sourceName: [UInt8], sourcePath: String, containerRoot: String,
                mailbox: String, extensionChain: String, contentType: String, bundleIdentifier: String,
                owner: (uid: UInt32, gid: UInt32)?, sourceApplication: String, annotation: [String: PropertyListValue],
                fileName: String? = nil, messageID: String? = nil, partPath: String? = nil,
                mimeType: String? = nil, typedBy: String? = nil, routedBy: String? = nil) {
        self.deliveryID = deliveryID
        self.source = source.withoutHead
        self.sourceFolder = sourceFolder
        self.sourceName = sourceName
        self.sourcePath = sourcePath
        self.containerRoot = containerRoot
        self.mailbox = mailbox
        self.extensionChain = extensionChain
        self.contentType = contentType
        self.bundleIdentifier = bundleIdentifier
        self.owner = owner
        self.sourceApplication = sourceApplication
        self.annotation = annotation
        self.fileName = fileName
        self.messageID = messageID
        self.partPath = partPath
        self.mimeType = mimeType
        self.typedBy = typedBy
        self.routedBy = routedBy
    }
}
