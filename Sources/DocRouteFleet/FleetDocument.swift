import Foundation
import SystemPackage

/// One document intake puts into the fleet: what a claiming host needs to write its copy and
/// announce it, and the descriptor its bytes are read from.
package struct FleetDocument: Sendable {
    /// The id the handler will see, on whichever host claims the delivery.
    package var deliveryID: UUID
    /// ``FleetSourceIdentity/text(host:device:inode:size:modificationNanoseconds:path:)`` of the source.
    package var sourceIdentity: String
    /// The name the copy starts from (before the name rule).
    package var fileName: String
    /// The document's type identifier (UTI).
    package var contentType: String
    package var extensionChain: String
    package var mailbox: String
    /// The handler's bundle identifier.
    package var bundleIdentifier: String
    package var sourceApplication: String
    /// The delivery's extra annotation entries as a JSON object (`{}` for none).
    package var annotationJSON: String
    package var size: Int64
    /// Read with `pread` from offset 0 up to `size`; the store never closes it.
    package var descriptor: FileDescriptor
    /// What intake knew of it, as a JSON object, kept as the detail of its `committed` event in
    /// `history_events` (when and where it was seen, how it was typed and routed): the start of
    /// its story on every host's `history`.
    package var intakeDetailJSON = "{}"

    package init(deliveryID: UUID, sourceIdentity: String, fileName: String, contentType: String, extensionChain: String,
                 mailbox: String, bundleIdentifier: String, sourceApplication: String, annotationJSON: String,
                 size: Int64, descriptor: FileDescriptor) {
        self.deliveryID = deliveryID
        self.sourceIdentity = sourceIdentity
        self.fileName = fileName
        self.contentType = contentType
        self.extensionChain = extensionChain
        self.mailbox = mailbox
        self.bundleIdentifier = bundleIdentifier
        self.sourceApplication = sourceApplication
        self.annotationJSON = annotationJSON
        self.size = size
        self.descriptor = descriptor
    }
}
