import DocRouteConfiguration
import DocRouteHandlers
import DocRouteMaildir
import DocRoutePlatform
import DocRouteProtocol
import DocRouteTypes
import Foundation
import Logging
import SystemPackage

/// Mail attachments nobody claims: recorded in the quarantine as entries naming their message and
/// part (``QuarantinedMailPart``), and delivered from the message when an operator releases them.
extension IntakePipeline {
    /// The message a part belongs to, as intake read it.
    struct MailPartInMessage {
        var arrival: ArrivalQueue.Arrival
        var inbox: InboxConfiguration
        var mailbox: String
        var messageKey: String
        var messagePath: String
    }

    /// Records an attachment that no handler claims in the quarantine, counts and logs it once;
    /// false when its entry cannot be written (the message is then read again later).
    func quarantineMailPart(_ attachment: MaildirAttachment, classification: TypeClassification, in message: MailPartInMessage) -> Bool {
        let unique = InboxNames.display(MaildirMessageName.unique(message.arrival.name))
        // The mailbox's folder under the root: `<root>/new` is the root's own, `<root>/.Work/new` `.Work`.
        let mailboxPath = String(message.arrival.folder.path.dropLast(MaildirLayout.newFolder.count + 1))
        let folder = mailboxPath.count > message.inbox.path.count ? String(mailboxPath.dropFirst(message.inbox.path.count + 1)) : ""
        let parents = classification.conformsTo.prefix(3).joined(separator: ", ")
        let reason = Self.noHandlerReason(classification.contentType, parents: parents, mailPart: true)
        let entry = QuarantinedMailPart(
            maildir: message.inbox.path, folder: folder, mailbox: message.mailbox, messageName: unique,
            messageID: message.messageKey, partPath: attachment.partPath, fileName: attachment.originalFilename,
            mimeType: attachment.mimeType, contentType: classification.contentType, size: attachment.size,
            reason: reason, quarantinedAt: UTCTimestamp(Date()).rfc3339)
        var metadata: Logger.Metadata = [
            "original-name": "\(attachment.originalFilename)", "path": "\(message.messagePath)", "mail-part": "\(attachment.partPath)",
            "mail-message-id": "\(message.messageKey)", "mime-type": "\(attachment.mimeType)", "content-type": "\(classification.contentType)",
            "mailbox": "\(message.mailbox)",
        ]
        if entry.isRecorded(in: configuration.quarantineDirectory) {
            // Read again (a retry, a restart before it was marked read): recorded and told already.
            return true
        }
        let path: String
        do {
            path = try entry.write(in: configuration.quarantineDirectory)
        } catch {
            metadata["error"] = "\(error)"
            logger.error("an attachment nobody claims cannot be recorded in the quarantine; the message stays in new/ and is read again later", metadata: metadata)
            return false
        }
        activity.quarantined(inbox: message.arrival.folder.inbox, reason: reason, arrival: nil)
        metadata["message-id"] = "quarantined"
        metadata["entry"] = "\(path)"
        logger.warning("attachment quarantined (its bytes stay in the message): \(reason)", metadata: metadata)
        return true
    }

    /// Reads the message a quarantine entry names from its Maildir again and delivers just that
    /// part: to its handler by the usual choice, or to `pick` when that is one of its Open In…
    /// candidates. The entry is removed once the part is delivered (or found delivered already).
    package func releaseMailPart(entryPath: String, pick: String?) async -> MailPartRelease {
        let entry: QuarantinedMailPart
        switch readEntry(entryPath) {
        case .success(let read): entry = read
        case .failure(let refusal): return refusal.release
        }
        guard let reader = mailReader,
              let inbox = configuration.inboxes.first(where: { $0.kind == .maildir && $0.path == entry.maildir }) else {
            return .refused(code: .notFound, message: "\(entry.maildir) is no longer a Maildir inbox of docrouted's configuration; deliver part \(entry.partPath) of the message by hand, then remove \(entryPath)")
        }
        let snapshot: RoutingSnapshot
        if let routing { snapshot = routing() } else {
            return .refused(code: .internal, message: "docrouted is not routing yet; try again in a moment")
        }
        guard let located = locateMessage(entry, in: inbox) else {
            return .refused(code: .notFound, message: "the message \(entry.messageName) is no longer in \(entry.maildir)/\(entry.messageFolder("cur")) or new/ (a mail client moved or deleted it); remove \(entryPath)")
        }
        defer { located.folder.closeIgnoringErrors() }
        let file: IntakeFile
        switch IntakeFile.open(name: located.name, in: located.folder.rawValue, maxSize: .max, headLength: 0) {
        case .success(let opened): file = opened
        case .failure(let refusal):
            return .refused(code: .notFound, message: "the message \(located.path) cannot be read: \(refusal)")
        }
        let extraction: MaildirExtraction
        do {
            extraction = try await reader.read(message: file.descriptor, path: located.path)
            FileDescriptor(rawValue: file.descriptor).closeIgnoringErrors()
        } catch {
            FileDescriptor(rawValue: file.descriptor).closeIgnoringErrors()
            return .refused(code: .internal, message: "the message \(located.path) cannot be read into \(reader.scratchPath): \(error)")
        }
        let wanted = extraction.attachments.first { $0.partPath == entry.partPath }
        for attachment in extraction.attachments where attachment.partPath != entry.partPath { reader.discard(attachment.temporaryName) }
        let messageKey = extraction.summary.envelope.messageID ?? "maildir:" + entry.messageName
        guard let attachment = wanted, messageKey == entry.messageID else {
            wanted.map { reader.discard($0.temporaryName) }
            return .refused(code: .notFound, message: "\(located.path) has no part \(entry.partPath) of message \(entry.messageID) any more; remove \(entryPath)")
        }
        let done = (try? await backend.deliveredParts(messageID: messageKey, mailbox: SandboxName.sanitizedComponent(entry.mailbox))) ?? []
        if done.contains(entry.partPath) {
            reader.discard(attachment.temporaryName)
            removeEntry(entryPath)
            logger.info("quarantined attachment was delivered already; its entry is removed", metadata: [
                "original-name": "\(entry.fileName)", "mail-part": "\(entry.partPath)", "mail-message-id": "\(entry.messageID)", "entry": "\(entryPath)",
            ])
            return .alreadyDelivered(entry)
        }
        let delivery: DocumentDelivery
        switch attachmentDelivery(attachment, mailbox: entry.mailbox, messageKey: messageKey, inbox: inbox,
                                  messagePath: located.path, reader: reader, snapshot: snapshot, pick: pick) {
        case .deliver(let routed):
            delivery = routed
        case .vanished:
            return .refused(code: .internal, message: "the attachment's scratch file in \(reader.scratchPath) vanished; try again")
        case .refused(let classification, .noHandler):
            reader.discard(attachment.temporaryName)
            return .refused(code: .noHandler, message: "still no handler claims \(classification.contentType); install one whose Info.plist claims it or a type it conforms to")
        case .refused(let classification, .notACandidate(let candidates)):
            reader.discard(attachment.temporaryName)
            let list = candidates.map(\.bundleIdentifier).joined(separator: ", ")
            return .refused(code: .noHandler, message: candidates.isEmpty
                ? "\(pick ?? "") cannot open \(classification.contentType): no handler claims it"
                : "\(pick ?? "") is not among the handlers that can open \(classification.contentType); pick one of: \(list)")
        }
        let outcome = await backend.deliver([delivery]).first
        activity.delivered([delivery], outcome.map { [$0] } ?? [], arrivals: [])
        switch outcome {
        case .committed(let deliveryID, let finalPath, _, _)?:
            recordCommitted(delivery, deliveryID: deliveryID, finalPath: finalPath)
            removeEntry(entryPath)
            logger.info("quarantined attachment released from its message", metadata: [
                "delivery-id": "\(deliveryID.lowercased())", "original-name": "\(delivery.originalName)", "bundle-id": "\(delivery.bundleIdentifier)",
                "mail-part": "\(entry.partPath)", "mail-message-id": "\(entry.messageID)", "path": "\(located.path)",
            ])
            await onCommitted?(delivery.bundleIdentifier)
            return .delivered(deliveryID: deliveryID, bundleIdentifier: delivery.bundleIdentifier, contentType: delivery.contentType, entry: entry)
        case .alreadyDelivered?:
            removeEntry(entryPath)
            return .alreadyDelivered(entry)
        case .failed(let error)?:
            reader.discard(attachment.temporaryName)
            return .refused(code: error.code == .overLimit ? .overLimit : .internal, message: "the attachment could not be delivered: \(error)")
        case nil:
            reader.discard(attachment.temporaryName)
            return .refused(code: .internal, message: "the attachment could not be delivered")
        }
    }

    /// Why an entry cannot be read.
    struct EntryRefusal: Error {
        var code: ErrorCode
        var message: String
        var release: MailPartRelease { .refused(code: code, message: message) }
    }

    /// The entry at `path`, which must be `<quarantine_directory>/<folder>/<name>.mailpart`, read
    /// without following links.
    func readEntry(_ path: String) -> Result<QuarantinedMailPart, EntryRefusal> {
        let quarantine = configuration.quarantineDirectory.hasSuffix("/") ? String(configuration.quarantineDirectory.dropLast()) : configuration.quarantineDirectory
        let notAnEntry = EntryRefusal(code: .badRequest, message: "\(path) is not a mail part entry of the quarantine (\(quarantine)/<mailbox>/<name>\(QuarantinedMailPart.suffix)); docroutectl quarantine list shows them")
        guard path.hasPrefix(quarantine + "/") else { return .failure(notAnEntry) }
        let parts = path.dropFirst(quarantine.count + 1).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }), parts[1].hasSuffix(QuarantinedMailPart.suffix),
              let folderName = FilePath.Component(parts[0]), let entryName = FilePath.Component(parts[1]) else { return .failure(notAnEntry) }
        do throws(Errno) {
            let root = try FileDescriptor.openDirectory(atPath: FilePath(quarantine))
            defer { root.closeIgnoringErrors() }
            let folder = try root.openDirectory(folderName)
            defer { folder.closeIgnoringErrors() }
            let file = try folder.open(entryName, flags: FileDescriptor.AccessMode.readOnly.rawValue | FileDescriptor.OpenOptions.nonBlocking.rawValue)
            defer { file.closeIgnoringErrors() }
            var bytes = [UInt8](repeating: 0, count: QuarantinedMailPart.maximumEntrySize + 1)
            var count = 0
            while count < bytes.count {
                let offset = count
                let read = try bytes.withUnsafeMutableBytes { buffer -> Result<Int, Errno> in
                    Result { () throws(Errno) in try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[offset...]), atOffset: Int64(offset)) }
                }.get()
                if read == 0 { break }
                count += read
            }
            guard let entry = QuarantinedMailPart.decode(bytes.prefix(count)) else { return .failure(notAnEntry) }
            return .success(entry)
        } catch .noSuchFileOrDirectory {
            return .failure(EntryRefusal(code: .notFound, message: "\(path) does not exist; docroutectl quarantine list shows what is in quarantine"))
        } catch {
            return .failure(EntryRefusal(code: .internal, message: "\(path) cannot be read: \(error)"))
        }
    }

    /// Where an entry's message is now: `new/<unique>`, or `cur/<unique>:2,<flags>` with whatever
    /// flags a mail client gave it since.
    struct LocatedMessage {
        var folder: FileDescriptor
        var name: [UInt8]
        var path: String
    }

    func locateMessage(_ entry: QuarantinedMailPart, in inbox: InboxConfiguration) -> LocatedMessage? {
        let unique = Array(entry.messageName.utf8)
        guard MaildirMessageName.isMessage(unique), !entry.folder.contains("/"), entry.folder.isEmpty || entry.folder.hasPrefix("."),
              let root = try? FileDescriptor.openDirectory(atPath: FilePath(inbox.path)) else { return nil }
        defer { root.closeIgnoringErrors() }
        var mailbox = root
        if !entry.folder.isEmpty {
            guard let component = FilePath.Component(entry.folder), let opened = try? root.openDirectory(component) else { return nil }
            mailbox = opened
        }
        defer { if mailbox != root { mailbox.closeIgnoringErrors() } }
        for leaf in [MaildirLayout.curFolder, MaildirLayout.newFolder] {
            guard let folder = try? mailbox.openDirectory(FilePath.Component(leaf)!) else { continue }
            var found: [UInt8]?
            try? folder.forEachDirectoryEntry { item in
                let name = item.nameBytes
                if !item.isDirectory && MaildirMessageName.unique(name) == unique { found = name }
                return found == nil
            }
            if let found {
                return LocatedMessage(folder: folder, name: found, path: inbox.path + "/" + entry.messageFolder(leaf) + "/" + InboxNames.display(found))
            }
            folder.closeIgnoringErrors()
        }
        return nil
    }

    /// Removes a released entry; one that cannot be removed is said once (a second release finds
    /// the part delivered and removes it then).
    func removeEntry(_ path: String) {
        let entry = FilePath(path)
        guard let name = entry.lastComponent else { return }
        do throws(Errno) {
            let folder = try FileDescriptor.openDirectory(atPath: entry.removingLastComponent())
            defer { folder.closeIgnoringErrors() }
            _ = try folder.unlink(name)
        } catch {
            logger.warning("a released attachment's quarantine entry cannot be removed: \(error); remove it by hand", metadata: ["entry": "\(path)"])
        }
    }
}
