import Foundation
import SystemPackage

/// One file to deliver; see ``DeliveryBatch/Request``.
public typealias DeliveryRequest = DeliveryBatch.Request

/// What became of one request; see ``DeliveryBatch/Outcome``.
public typealias DeliveryOutcome = DeliveryBatch.Outcome

extension DeliveryBatch {
    /// One file to deliver: an open source, where it came from, and where it goes.
    ///
    /// The batch never reopens the source by name and never closes the caller's descriptors.
    public struct Request: Sendable {
        /// The delivery's id (sent to the handler; never changes).
        public var deliveryID: UUID
        // File descriptors are plain numbers here so a request can cross threads; FileDescriptor
        // is not Sendable.
        private var sourceNumber: CInt
        private var sourceDirectoryNumber: CInt

        /// The source, opened by the caller with `O_RDONLY | O_NOFOLLOW | O_NONBLOCK`.
        public var source: FileDescriptor {
            get { FileDescriptor(rawValue: sourceNumber) }
            set { sourceNumber = newValue.rawValue }
        }
        /// What `fstat` said of ``source`` when the caller opened it; the copy must match it.
        public var sourceStatus: FileStatus
        /// The source's path, recorded in the ledger (recovery removes it by this path).
        public var sourcePath: FilePath
        /// The inbox folder holding the source, to remove it by name once delivered.
        public var sourceDirectory: FileDescriptor {
            get { FileDescriptor(rawValue: sourceDirectoryNumber) }
            set { sourceDirectoryNumber = newValue.rawValue }
        }
        /// The source's name in ``sourceDirectory`` (raw bytes; need not be UTF-8).
        public var sourceName: FilePath.Component
        /// Copy without removing the source (an `open` of a client's own file). The ledger then
        /// records no source path, so neither the batch nor recovery ever removes it.
        public var keepSource: Bool

        /// The handler's container root; the copy goes to `Documents/Inbox/<mailbox>/` below it.
        public var containerRoot: FilePath
        /// The mailbox folder (sanitised like a file name).
        public var mailbox: String
        /// Owner of the copy and of created folders, applied when docrouted runs as root.
        public var owner: SandboxWriter.Owner?

        /// The name the file should keep; `nil` for ``sourceName``'s (invalid UTF-8 replaced).
        public var originalName: String?
        /// The extension chain the type engine recognised (`.pdb.gz`), or empty.
        public var extensionChain: String
        /// The file's Uniform Type Identifier.
        public var contentType: String
        /// The handler it goes to.
        public var bundleIdentifier: String
        /// `sourceApplication` of the event (`com.apple.mobilemail` for mail), if any.
        public var sourceApplication: String?
        /// Extra annotation entries as a JSON object (`{"from":…,"subject":…,"messageID":…}`), or
        /// `nil`. `mailbox`, `originalFilename` and `size` are always added.
        public var annotation: String?
        /// For a mail attachment: the message's Message-ID.
        public var messageID: String?
        /// For a mail attachment: which MIME part.
        public var partPath: String?

        /// Creates a request.
        public init(
            deliveryID: UUID = UUID(),
            source: FileDescriptor,
            sourceStatus: FileStatus,
            sourcePath: FilePath,
            sourceDirectory: FileDescriptor,
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
            partPath: String? = nil
        ) {
            self.deliveryID = deliveryID
            self.sourceNumber = source.rawValue
            self.sourceStatus = sourceStatus
            self.sourcePath = sourcePath
            self.sourceDirectoryNumber = sourceDirectory.rawValue
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
    public enum Outcome: Sendable {
        /// The copy is in place under its final name and its ledger row committed, durably.
        case committed(LedgerRecord)
        /// This very source (same path, device, inode, size and modification time) was delivered
        /// and committed before; a crash or a failed removal had left it in its inbox. It was
        /// removed now instead of being delivered twice. Nothing new is owed to the handler.
        case alreadyDelivered(LedgerRecord)
        /// Nothing was delivered; the source is where it was.
        case failed(DeliveryError)

        /// The committed record, if delivered now.
        public var record: LedgerRecord? {
            if case .committed(let record) = self { return record }
            return nil
        }

        /// The error, if not delivered.
        public var error: DeliveryError? {
            if case .failed(let error) = self { return error }
            return nil
        }
    }
}
