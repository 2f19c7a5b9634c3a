import Foundation

/// A delivery this host claimed: what it needs to write the copy and announce it to the handler.
package struct FleetClaim: Sendable, Hashable {
    /// The id intake chose, the handler's on every host.
    package var deliveryID: UUID
    /// Whose bytes ``FleetQueue/copyBytes(of:to:)`` writes.
    package var documentID: UUID
    package var bundleIdentifier: String
    package var mailbox: String
    package var fileName: String
    package var contentType: String
    package var extensionChain: String
    package var sourceApplication: String
    /// Extra annotation entries as a JSON object (`{}` for none).
    package var annotationJSON: String
    package var size: Int64
    /// The host whose intake committed the document.
    package var intakeHost: String
    /// 1 for the first claim; more when a lease ran out or the delivery was released before.
    package var attempts: Int
    /// The document's bytes, when the claim brought them: a document of one chunk, its chunk
    /// found and of its size. Otherwise nil, and ``FleetQueue/smallDocuments(_:)`` or
    /// ``FleetQueue/copyBytes(of:to:)`` fetch them (and say what is wrong, if anything is).
    package var contents: [UInt8]?

    package init(deliveryID: UUID, documentID: UUID, bundleIdentifier: String, mailbox: String, fileName: String,
                 contentType: String, extensionChain: String, sourceApplication: String, annotationJSON: String,
                 size: Int64, intakeHost: String, attempts: Int) {
        self.deliveryID = deliveryID
        self.documentID = documentID
        self.bundleIdentifier = bundleIdentifier
        self.mailbox = mailbox
        self.fileName = fileName
        self.contentType = contentType
        self.extensionChain = extensionChain
        self.sourceApplication = sourceApplication
        self.annotationJSON = annotationJSON
        self.size = size
        self.intakeHost = intakeHost
        self.attempts = attempts
    }
}
