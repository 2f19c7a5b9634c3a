import DocRoutePlatform
import Foundation

/// A package document (a folder delivered whole) that intake hands to delivery.
///
/// The folder is opened by delivery itself from ``sourceFolder``: a package is walked once, by the
/// code that copies it.
package struct PackageDelivery: Sendable {
    /// The delivery's id (sent to the handler; never changes).
    package var deliveryID: UUID
    /// The inbox folder holding the package (kept open until the package is out of it).
    package var sourceFolder: DirectoryHandle
    /// The package's name in ``sourceFolder`` (raw bytes).
    package var sourceName: [UInt8]
    /// The package's path, for the ledger (recovery removes a delivered source by it) and logs.
    package var sourcePath: String
    /// The handler's container root; the package goes to `Documents/Inbox/<mailbox>/` below it.
    package var containerRoot: String
    /// The mailbox folder.
    package var mailbox: String
    /// Owner of the copy (see ``HandlerAccount/copyOwner(for:)``), nil to keep docrouted's.
    package var owner: (uid: UInt32, gid: UInt32)?
    /// The name the package keeps (before the name rule).
    package var originalName: String
    /// The extension chain the type engine recognised (`.rtfd`).
    package var extensionChain: String
    /// The package's Uniform Type Identifier.
    package var contentType: String
    /// The handler it goes to.
    package var bundleIdentifier: String
    /// `sourceApplication` of the event, if any.
    package var sourceApplication: String?
    /// Extra annotation entries as a JSON object, or nil.
    package var annotation: String?

    package init(deliveryID: UUID = .random(), sourceFolder: DirectoryHandle, sourceName: [UInt8], sourcePath: String, containerRoot: String,
                 mailbox: String, owner: (uid: UInt32, gid: UInt32)? = nil, originalName: String, extensionChain: String,
                 contentType: String, bundleIdentifier: String, sourceApplication: String? = nil, annotation: String? = nil) {
        self.deliveryID = deliveryID
        self.sourceFolder = sourceFolder
        self.sourceName = sourceName
        self.sourcePath = sourcePath
        self.containerRoot = containerRoot
        self.mailbox = mailbox
        self.owner = owner
        self.originalName = originalName
        self.extensionChain = extensionChain
        self.contentType = contentType
        self.bundleIdentifier = bundleIdentifier
        self.sourceApplication = sourceApplication
        self.annotation = annotation
    }
}
