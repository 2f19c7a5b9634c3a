import DocRouteHandlers
import DocRouteIntake
import DocRouteLedger
import DocRoutePlatform
import Foundation
import SystemPackage

/// One file to deliver; see ``DeliveryBatch/Request``.
package typealias DeliveryRequest = DeliveryBatch.Request

extension DeliveryBatch {
    /// One file to deliver: an open source, where it came from, and where it goes.
    ///
    /// The batch never reopens the source by name and never closes the caller's descriptors.
    package struct Request: Sendable {
        /// The delivery's id (sent to the handler; never changes).
        package var deliveryID: UUID
        // A plain number: the request's whole footprint is kept small (a batch holds hundreds).
        private var sourceNumber: CInt

        /// The source, opened by the caller with `O_RDONLY | O_NOFOLLOW | O_NONBLOCK`.
        package var source: FileDescriptor {
            get { FileDescriptor(rawValue: sourceNumber) }
            set { sourceNumber = newValue.rawValue }
        }
        /// What `fstat` said of ``source`` when the caller opened it; the copy must match it.
        package var sourceStatus: FileStatus
        /// The source's path, recorded in the ledger (recovery removes it by this path).
        package var sourcePath: FilePath
        /// The inbox folder holding the source, to remove it by name once delivered; the request
        /// keeps it open until then.
        package var sourceFolder: DirectoryHandle?
        /// ``sourceFolder``'s descriptor (-1 when there is none: the source is kept).
        package var sourceDirectory: FileDescriptor { sourceFolder?.descriptor ?? FileDescriptor(rawValue: -1) }
        /// The source's name in ``sourceDirectory`` (raw bytes; need not be UTF-8).
        package var sourceName: FilePath.Component
        /// Copy without removing the source (an `open` of a client's own file). The ledger then
        /// records no source path, so neither the batch nor recovery ever removes it.
        package var keepSource: Bool

        /// The handler's container root; the copy goes to `Documents/Inbox/<mailbox>/` below it.
        package var containerRoot: FilePath
        /// The mailbox folder (sanitised like a file name).
        package var mailbox: String
        /// Owner of the copy and of created folders, applied when docrouted runs as root.
        package var owner: SandboxWriter.Owner?

        /// The name the file should keep; `nil` for ``sourceName``'s (invalid UTF-8 replaced).
        package var originalName: String?
        /// The extension chain the type engine recognised (`.pdb.gz`), or empty.
        package var extensionChain: String
        /// The file's Uniform Type Identifier.
        package var contentType: String
        /// The handler it goes to.
        package var bundleIdentifier: String
        /// `sourceApplication` of the event (`com.apple.mobilemail` for mail), if any.
        package var sourceApplication: String?
        /// Extra annotation entries as a JSON object (`{"from":…,"subject":…,"messageID":…}`), or
        /// `nil`. `mailbox`, `originalFilename` and `size` are always added.
        package var annotation: String?
        /// For a mail attachment: the message's Message-ID.
        package var messageID: String?
        /// For a mail attachment: which MIME part.
        package var partPath: String?
        /// The uid whose `open` asked for it, recorded so it counts against that uid's pending
        /// limit; nil for an inbox's file.
        package var requesterUID: UInt32?
        /// How it came in, for its history (nil: not known, as for a test's request).
        package var arrival: DocumentArrival?

        /// Creates a request.
        package init(
            deliveryID: UUID = .random(),
            source: FileDescriptor,
            sourceStatus: FileStatus,
            sourcePath: FilePath,
            sourceFolder: DirectoryHandle?,
            sourceName: FilePath.Component,
            keepSource: Bool = false,
            containerRoot: FilePath,
            mailbox: String,
            owner: SandboxWriter.Owner? = nil,
            originalName: String? = nil,
            extensionChain: String,
            contentType: String,
            bundleIdentifier: String,
            sourceApplication: String? = nil,
            annotation: String? = nil,
            messageID: String? = nil,
            partPath: String? = nil,
            requesterUID: UInt32? = nil,
            arrival: DocumentArrival? = nil
        ) {
            self.deliveryID = deliveryID
            self.sourceNumber = source.rawValue
            self.sourceStatus = sourceStatus
            self.sourcePath = sourcePath
            self.sourceFolder = sourceFolder
            self.sourceName = sourceName
            self.keepSource = keepSource
            self.containerRoot = containerRoot
            self.mailbox = mailbox
            self.owner = owner
            self.originalName = originalName
            self.extensionChain = extensionChain
            self.contentType = contentType
            self.bundleIdentifier = bundleIdentifier
            self.sourceApplication = sourceApplication
            self.annotation = annotation
            self.messageID = messageID
            self.partPath = partPath
            self.requesterUID = requesterUID
            self.arrival = arrival
        }

        /// Whether the source still has a name, and (for an inbox file) its inbox name still holds
        /// it. `false` once the batch before took it out of its inbox (renamed aside or removed),
        /// or its dropper did.
        var isStillInItsInbox: Bool {
            guard let opened = try? source.status(), opened.linkCount > 0 else { return false }
            if keepSource { return true }
            guard let named = try? sourceDirectory.status(of: sourceName) else { return false }
            return named.isSameFile(as: sourceStatus)
        }

        /// The name the copy starts from.
        var sandboxName: SandboxName {
            if let originalName {
                return SandboxName(original: originalName, extensionChain: extensionChain)
            }
            return sourceName.withPlatformString { pointer in
                SandboxName(
                    originalBytes: UnsafeRawBufferPointer(start: pointer, count: strlen(pointer)),
                    extensionChain: extensionChain)
            }
        }
    }

    /// What became of one request.
    package enum Outcome: Sendable {
        /// The copy is in place under its final name and its ledger row committed, durably.
        case committed(LedgerRecord)
        /// This very source (same path, device, inode, size and modification time) was delivered
        /// and committed before; a crash or a failed removal had left it in its inbox. It was
        /// removed now instead of being delivered twice. Nothing new is owed to the handler.
        case alreadyDelivered(LedgerRecord)
        /// Nothing was delivered; the source is where it was.
        case failed(DeliveryError)

        /// The committed record, if delivered now.
        package var record: LedgerRecord? {
            if case .committed(let record) = self { return record }
            return nil
        }

        /// The error, if not delivered.
        package var error: DeliveryError? {
            if case .failed(let error) = self { return error }
            return nil
        }
    }
}
