import DocRouteHandlers
import DocRouteIntake
import DocRouteLedger
import DocRoutePlatform
import Foundation
import SystemPackage

/// One file to deliver; see ``DeliveryBatch/Request``.
package typealias DeliveryRequest = DeliveryBatch.Request

extension DeliveryBatch {
    /// One file to deliver: intake's ``DocumentDelivery`` itself, as ``PackageRequest`` is intake's
    /// ``PackageDelivery``. The batch reads it through the views below and copies nothing of it.
    ///
    /// The batch never reopens the source by name and never closes a descriptor of a request:
    /// ``LedgerBackend/submit(_:)`` closes each source once its outcome is known.
    package typealias Request = DocumentDelivery
}

extension DocumentDelivery {
    /// The source, opened by intake with `O_RDONLY | O_NOFOLLOW | O_NONBLOCK`.
    var sourceDescriptor: FileDescriptor { FileDescriptor(rawValue: source.descriptor) }
    /// What `fstat` said of the source when intake opened it; the copy must match it.
    var sourceStatus: FileStatus { source.status }
    /// The source's path, recorded in the ledger (recovery removes it by this path).
    var sourceFilePath: FilePath { FilePath(sourcePath) }
    /// ``sourceFolder``'s descriptor (-1 when there is none: the source is kept).
    var sourceDirectory: FileDescriptor { sourceFolder?.descriptor ?? FileDescriptor(rawValue: -1) }
    /// The source's name in ``sourceDirectory`` (raw bytes; need not be UTF-8).
    var sourceComponent: FilePath.Component { FilePath.Component(platformBytes: sourceName) ?? FilePath.Component("document") }
    /// Copy without removing the source (an `open` of a client's own file): no folder to remove
    /// it from. The ledger then records no source path, so neither the batch nor recovery ever
    /// removes it.
    var keepSource: Bool { sourceFolder == nil }
    /// The handler's container root; the copy goes to `Documents/Inbox/<mailbox>/` below it.
    var containerPath: FilePath { FilePath(containerRoot) }
    /// Owner of the copy and of created folders, applied when docrouted may give files away.
    var copyOwner: SandboxWriter.Owner? { owner.map { SandboxWriter.Owner(userID: $0.uid, groupID: $0.gid) } }
    /// The extra annotation entries as a JSON object, or nil for none. `mailbox`,
    /// `originalFilename` and `size` are added by the batch.
    var annotationJSON: String? {
        guard !annotation.isEmpty, let data = try? JSONEncoder().encode(annotation) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
    /// How it came in, for its history; the inbox is the source's folder when intake named none.
    var arrival: DocumentArrival {
        DocumentArrival(seenAt: seenAt, inbox: inbox ?? LedgerBackend.folder(of: sourcePath),
                        mimeType: mimeType, typedBy: typedBy, routedBy: routedBy)
    }

    /// Whether the source still has a name, and (for an inbox file) its inbox name still holds
    /// it. `false` once the batch before took it out of its inbox (renamed aside or removed),
    /// or its dropper did.
    var isStillInItsInbox: Bool {
        guard let opened = try? sourceDescriptor.status(), opened.linkCount > 0 else { return false }
        if keepSource { return true }
        guard let named = try? sourceDirectory.status(of: sourceComponent) else { return false }
        return named.isSameFile(as: sourceStatus)
    }

    /// The name the copy starts from: ``fileName`` (a mail part's), else the source's own name
    /// (invalid UTF-8 replaced).
    var sandboxName: SandboxName {
        SandboxName(original: fileName ?? InboxNames.display(sourceName), extensionChain: extensionChain)
    }
}

extension DeliveryBatch {
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
