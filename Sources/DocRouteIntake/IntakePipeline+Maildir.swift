import DocRouteConfiguration
import DocRouteHandlers
import DocRouteMail
import DocRouteMaildir
import DocRoutePlatform
import DocRouteProtocol
import DocRouteTypes
import Foundation
import Logging
import SystemPackage

/// Maildir inboxes: each mailbox's `new/` is watched; a message renamed in is read (streamed)
/// into one scratch file per attachment, the attachments are typed from their names and their
/// `Content-Type`, and delivered like dropped files. Once all of a message's attachments are
/// durable and recorded, the message moves to `cur/` with the `S` flag. The message itself is
/// never changed or removed.
extension IntakePipeline {
    /// The most messages read before their attachments go to the backend as one batch.
    static let messageBatchLimit = 32

    // MARK: Watching

    /// Creates the root's `new/`, `cur/` and `tmp/` if missing, watches the root, then each mailbox.
    func watchMaildir(_ index: Int) {
        let inbox = configuration.inboxes[index]
        let root = WatchedFolder(inbox: index, mailbox: nil, path: inbox.path, role: .maildirRoot)
        do {
            try prepareInbox(inbox)
            for leaf in [MaildirLayout.newFolder, MaildirLayout.curFolder, MaildirLayout.tmpFolder] {
                let leafPath = FilePath(inbox.path + "/" + leaf)
                do throws(Errno) {
                    // Group-writable whatever the service's umask: the delivery agent is a group member.
                    if try leafPath.makeDirectory(permissions: 0o770) { try leafPath.changeMode(0o770) }
                } catch {
                    // The root is watched all the same: a `new/` the delivery agent makes later is
                    // found when it appears.
                    logger.warning("maildir folder cannot be created: \(error)", metadata: ["path": "\(leafPath)"])
                }
            }
            try watcher.watch(root)
        } catch {
            logger.error("maildir cannot be watched: \(error)", metadata: ["path": "\(inbox.path)"])
            return
        }
        scanMaildir(index)
    }

    /// Watches (again) every mailbox of Maildir `index` and queues the messages waiting in them.
    func scanMaildir(_ index: Int) {
        let inbox = configuration.inboxes[index]
        guard let root = open(WatchedFolder(inbox: index, mailbox: nil, path: inbox.path, role: .maildirRoot)) else { return }
        let mailboxes: [MaildirMailbox]
        do {
            mailboxes = try MaildirLayout.mailboxes(in: root.descriptor.rawValue)
        } catch {
            logger.error("maildir cannot be listed; its mailboxes are looked at again at the next change there: \(error)", metadata: ["path": "\(inbox.path)"])
            return
        }
        for mailbox in mailboxes {
            watchMaildirMailbox(index, mailbox)
        }
    }

    /// A folder appeared at a Maildir's root: `new` (the root's own mailbox) or `.Name`.
    func maildirEntryAppeared(_ index: Int, name: [UInt8]) {
        let path = configuration.inboxes[index].path
        if name == Array(MaildirLayout.newFolder.utf8) {
            watchMaildirMailbox(index, MaildirMailbox(name: MaildirFolderName.inbox, folder: []))
            return
        }
        guard let mailbox = MaildirLayout.mailbox(forEntry: name) else { return }
        let folderPath = path + "/" + String(decoding: name, as: UTF8.self)
        // An IMAP server makes `.Name` first and `new/` inside it a moment later: watch the folder
        // for it, then look, so a `new/` made in between is not missed.
        let folder = WatchedFolder(inbox: index, mailbox: mailbox.name, path: folderPath, role: .maildirFolder)
        guard watchMaildir(folder, "maildir folder") else { return }
        if let root = open(WatchedFolder(inbox: index, mailbox: nil, path: path, role: .maildirRoot)),
           let component = FilePath.Component(platformBytes: name),
           MaildirLayout.hasNewFolder(component, in: root.descriptor.rawValue) {
            watchMaildirMailbox(index, mailbox)
        }
    }

    /// `new/` appeared inside a watched `.Name` folder.
    func maildirNewAppeared(in folder: WatchedFolder) {
        let rootPath = configuration.inboxes[folder.inbox].path
        guard folder.path.hasPrefix(rootPath + "/") else { return }
        let entry = Array(folder.path.dropFirst(rootPath.count + 1).utf8)
        guard let mailbox = MaildirLayout.mailbox(forEntry: entry) else { return }
        watchMaildirMailbox(folder.inbox, mailbox)
    }

    /// Watches a folder of a Maildir, if the inbox's `max_mailboxes` admits it; false when it is
    /// not watched (an error, logged naming it as `what`).
    func watchMaildir(_ folder: WatchedFolder, _ what: String) -> Bool {
        guard admitWatch(folder) else { return false }
        do {
            try watcher.watch(folder)
        } catch {
            logger.error("\(what) cannot be watched: \(error)", metadata: ["path": "\(folder.path)"])
            return false
        }
        return true
    }

    /// Watches a mailbox's `new/`, makes sure its `cur/` exists, then queues what waits in `new/`.
    func watchMaildirMailbox(_ index: Int, _ mailbox: MaildirMailbox) {
        let inbox = configuration.inboxes[index]
        let name = mailbox.folder.isEmpty ? inbox.defaultMailbox : mailbox.name
        let newPath = inbox.path + "/" + mailbox.newPath
        let folder = WatchedFolder(inbox: index, mailbox: name, path: newPath, role: .maildirNew)
        guard watchMaildir(folder, "maildir mailbox") else { return }
        guard let newFolder = open(folder) else { return }
        var found = 0
        forEachListed(of: newFolder.descriptor, path: newPath) { entry in
            if !entry.isDirectory && MaildirMessageName.isMessage(entry.nameBytes) {
                enqueue(.init(folder: folder, name: entry.nameBytes))
                found += 1
            }
            return !queueIsFull
        }
        if found > 0 { logger.info("scan found waiting messages", metadata: ["path": "\(newPath)", "count": "\(found)"]) }
    }

    // MARK: Messages

    /// One message read into scratch files, and what became of its attachments.
    struct MessageInProgress {
        var arrival: ArrivalQueue.Arrival
        var newFolder: DirectoryHandle
        var path: String
        /// Deliveries of this message, as indices into the batch's deliveries.
        var deliveries: [Int] = []
        /// Nothing in the message could be recovered (its damaged parts decoded to nothing, and no
        /// other part was delivered): leave it in `new/` so a person sees it, and report it once.
        var incomplete = false
        /// A part nobody claims could not be recorded in the quarantine: the message stays in
        /// `new/` and is read again later, so that part is not lost from sight.
        var unrecorded = false
    }

    /// Reads each message, delivers all their attachments as one batch, then marks the messages
    /// whose attachments are all done as read.
    func processMessages(_ batch: [ArrivalQueue.Arrival], snapshot: RoutingSnapshot) async {
        guard let reader = mailReader else { return }
        var messages: [MessageInProgress] = []
        var deliveries: [DocumentDelivery] = []
        for arrival in batch where !configuration.inboxes[arrival.folder.inbox].retired {
            guard MaildirMessageName.isMessage(arrival.name), let newFolder = open(arrival.folder) else { continue }
            let newFD = newFolder.descriptor.rawValue
            let inbox = configuration.inboxes[arrival.folder.inbox]
            let mailbox = arrival.folder.mailbox ?? inbox.defaultMailbox
            let path = arrival.folder.path + "/" + InboxNames.display(arrival.name)
            let file: IntakeFile
            switch IntakeFile.open(name: arrival.name, in: newFD, maxSize: .max, headLength: 0) {
            case .success(let opened): file = opened
            case .failure(.vanished):
                // A mail client took it first: nothing of it is owed to anyone.
                logger.debug("message gone before it was read", metadata: ["path": "\(path)"])
                continue
            case .failure(.unreadable(let code)):
                logger.error("message cannot be read; will try again", metadata: ["path": "\(path)", "error": "\(Errno(rawValue: code))"])
                scheduleRetry(arrival)
                continue
            case .failure(let refusal):
                reportOnce(path, inbox: arrival.folder.inbox, identity: nil, "message left in new/: \(refusal)")
                continue
            }
            let identity = "\(file.device):\(file.inode):\(file.size):\(file.modificationTimeNanoseconds)"
            let extraction: MaildirExtraction
            do {
                extraction = try await reader.read(message: file.descriptor, path: path)
                file.closeDescriptor()
            } catch {
                file.closeDescriptor()
                if let error = error as? DeliveryError, error.isRetryable {
                    logger.error("message cannot be read into \(reader.scratchPath); will try again: \(error)", metadata: ["path": "\(path)"])
                    scheduleRetry(arrival)
                } else {
                    reportOnce(path, inbox: arrival.folder.inbox, identity: identity, "message left in new/: \(error)")
                }
                continue
            }
            if extraction.summary.isMalformed {
                extraction.removeTemporaryFiles(in: reader.scratch)
                let problems = extraction.summary.problems.filter(\.isFatal).map { "\($0)" }.joined(separator: "; ")
                reportOnce(path, inbox: arrival.folder.inbox, identity: identity, "malformed message left in new/: \(problems)")
                continue
            }
            let envelope = extraction.summary.envelope
            // Without a Message-ID the Maildir unique name identifies the message across runs.
            let messageKey = envelope.messageID ?? "maildir:" + String(decoding: MaildirMessageName.unique(arrival.name), as: UTF8.self)
            let done = (try? await backend.deliveredParts(messageID: messageKey, mailbox: SandboxName.sanitizedComponent(mailbox))) ?? []
            var message = MessageInProgress(arrival: arrival, newFolder: newFolder, path: path)
            var unrecoverable: [MaildirAttachment] = []
            var skipped: [SkippedPart] = []
            for info in extraction.oversized {
                logger.warning("attachment skipped: over max_file_size (\(configuration.maxFileSize) bytes)", metadata: [
                    "path": "\(path)", "mail-part": "\(info.partPath)", "original-name": "\(info.fileName)", "mail-message-id": "\(messageKey)",
                ])
                skipped.append(SkippedPart(messagePath: path, messageID: messageKey, partPath: info.partPath, fileName: info.fileName,
                                           mailbox: mailbox, size: nil, contentType: nil,
                                           reason: "over max_file_size (\(configuration.maxFileSize) bytes)"))
            }
            for attachment in extraction.attachments {
                if done.contains(attachment.partPath) {
                    reader.discard(attachment.temporaryName)
                    continue
                }
                if attachment.isUnrecoverable {
                    reader.discard(attachment.temporaryName)
                    unrecoverable.append(attachment)
                    continue
                }
                let delivery: DocumentDelivery
                switch attachmentDelivery(attachment, mailbox: mailbox, messageKey: messageKey, inbox: inbox,
                                          messagePath: path, reader: reader, snapshot: snapshot) {
                case .deliver(let routed):
                    delivery = routed
                case .vanished:
                    reader.discard(attachment.temporaryName)
                    continue
                case .refused(let classification, _):
                    reader.discard(attachment.temporaryName)
                    skipped.append(SkippedPart(messagePath: path, messageID: messageKey, partPath: attachment.partPath,
                                               fileName: attachment.fileName, mailbox: mailbox, size: attachment.size,
                                               contentType: classification.contentType,
                                               reason: "no handler claims \(classification.contentType); recorded in the quarantine"))
                    let part = MailPartInMessage(arrival: arrival, inbox: inbox, mailbox: mailbox, messageKey: messageKey, messagePath: path)
                    if !quarantineMailPart(attachment, classification: classification, in: part) { message.unrecorded = true }
                    continue
                }
                if !attachment.damage.isEmpty {
                    // Delivered with what decoded, as a mail client shows it; the annotation says so.
                    logger.warning("attachment delivered damaged (\(attachment.damage))", metadata: [
                        "path": "\(path)", "mail-part": "\(attachment.partPath)", "original-name": "\(attachment.originalFilename)",
                        "mail-message-id": "\(messageKey)", "damage": "\(attachment.damage)",
                    ])
                }
                message.deliveries.append(deliveries.count)
                deliveries.append(delivery)
            }
            if !unrecoverable.isEmpty {
                let parts = unrecoverable.map { "\($0.partPath) (\($0.fileName): \($0.damage))" }.joined(separator: ", ")
                if extraction.nothingRecoverable {
                    // Nothing at all came out of it: keep it unread where a person will look.
                    message.incomplete = true
                    reportOnce(path, inbox: arrival.folder.inbox, identity: identity,
                               "message left in new/: nothing in it can be recovered; part \(parts) decoded to no bytes")
                } else {
                    for attachment in unrecoverable {
                        logger.warning("attachment skipped: it decoded to no bytes (\(attachment.damage))", metadata: [
                            "path": "\(path)", "mail-part": "\(attachment.partPath)", "original-name": "\(attachment.originalFilename)",
                            "mail-message-id": "\(messageKey)",
                        ])
                    }
                }
            }
            messages.append(message)
            for part in skipped { await backend.noteSkipped(part) }
        }

        let outcomes = deliveries.isEmpty ? [] : await backend.deliver(deliveries)
        let messageOf = messages.reduce(into: [Int: ArrivalQueue.Arrival]()) { map, message in
            for index in message.deliveries { map[index] = message.arrival }
        }
        activity.delivered(deliveries, outcomes, arrivals: deliveries.indices.compactMap { messageOf[$0] })
        var touched: Set<String> = []
        for (index, outcome) in outcomes.enumerated() {
            let delivery = deliveries[index]
            switch outcome {
            case .committed(let deliveryID, let finalPath, _, _):
                touched.insert(delivery.bundleIdentifier)
                recordCommitted(delivery, deliveryID: deliveryID, finalPath: finalPath)
                if let message = messageOf[index], let part = delivery.partPath {
                    // Quarantined when the message was read before (a retry, a restart): claimed now.
                    let unique = InboxNames.display(MaildirMessageName.unique(message.name))
                    if QuarantinedMailPart.remove(mailbox: delivery.mailbox, messageName: unique, partPath: part, in: configuration.quarantineDirectory) {
                        logger.info("quarantined attachment delivered with its message", metadata: [
                            "delivery-id": "\(deliveryID.lowercased())", "original-name": "\(delivery.originalName)", "mail-part": "\(part)",
                        ])
                    }
                }
            case .alreadyDelivered:
                break
            case .failed(let error):
                // The scratch file is not the message: it is made again from the message next time.
                reader.discard(String(decoding: delivery.sourceName, as: UTF8.self))
                logger.error("attachment delivery failed\(error.isRetryable ? "; will try again" : ""): \(error)", metadata: [
                    "bundle-id": "\(delivery.bundleIdentifier)", "mail-part": "\(delivery.partPath ?? "")", "code": "\(error.code)",
                    "original-name": "\(delivery.originalName)", "path": "\(delivery.sourcePath)",
                ])
            }
        }
        for message in messages {
            let failures = message.deliveries.compactMap { index -> Bool? in
                if case .failed(let error) = outcomes[index] { return error.isRetryable }
                return nil
            }
            if failures.contains(true) || message.unrecorded {
                scheduleRetry(message.arrival)
            } else if failures.isEmpty && !message.incomplete {
                attempts[message.arrival] = nil
                markRead(message)
            }
        }
        for bundle in touched.sorted() { await onCommitted?(bundle) }
    }

    /// What becomes of one attachment.
    enum AttachmentRouting {
        /// A handler claims it: this delivery.
        case deliver(DocumentDelivery)
        /// No handler claims it, or the one asked for is not a candidate (typed so).
        case refused(TypeClassification, RoutingSnapshot.Refusal)
        /// Its scratch file is gone (logged): it is made again when the message is read again.
        case vanished
    }

    /// Types one attachment, chooses its handler (the one asked for, `pick`, when it is among the
    /// candidates) and describes its delivery.
    func attachmentDelivery(
        _ attachment: MaildirAttachment, mailbox: String, messageKey: String, inbox: InboxConfiguration,
        messagePath: String, reader: MaildirMessageReader, snapshot: RoutingSnapshot, pick: String? = nil
    ) -> AttachmentRouting {
        let name = Array(attachment.temporaryName.utf8)
        guard let route = MaildirAttachmentRoute.route(attachment, scratch: reader.scratchNumber, engine: snapshot.engine, selector: snapshot.selector) else {
            logger.error("attachment scratch file vanished", metadata: ["path": "\(attachment.temporaryPath)"])
            return .vanished
        }
        let file = route.file
        let classification = route.classification
        let handler: RegisteredHandler
        switch pick.map({ snapshot.handler(for: classification, pick: $0) }) ?? route.handler.map(Result.success) ?? .failure(.noHandler) {
        case .success(let chosen):
            handler = chosen
        case .failure(let refusal):
            file.closeDescriptor()
            return .refused(classification, refusal)
        }
        var annotation = attachment.annotation
        annotation["mailbox"] = .string(mailbox)
        annotation["size"] = .integer(file.size)
        if !attachment.damage.isEmpty { annotation["damage"] = .array(attachment.damage.words.map(PropertyListValue.string)) }
        var delivery = snapshot.delivery(
            of: file, to: handler, classification: classification, sourceFolder: reader.scratchFolder, sourceName: name,
            sourcePath: attachment.temporaryPath, mailbox: mailbox, sourceApplication: inbox.sourceApplication)
        delivery.annotation = annotation
        delivery.fileName = attachment.fileName
        delivery.messageID = messageKey
        delivery.partPath = attachment.partPath
        delivery.inbox = messagePath
        return .deliver(delivery)
    }

    /// Moves a finished message from `new/` to `cur/` with the `S` flag, the way a mail client
    /// marks a message read, so the user still finds it.
    func markRead(_ message: MessageInProgress) {
        let curPath = String(message.arrival.folder.path.dropLast(MaildirLayout.newFolder.count)) + MaildirLayout.curFolder
        let curFolder: FileDescriptor
        do {
            // Through the open new/ folder's parent: the mailbox whose new/ was read, whatever
            // happened to the path since.
            let mailbox = try message.newFolder.descriptor.openDirectory("..")
            defer { mailbox.closeIgnoringErrors() }
            let cur = FilePath.Component(MaildirLayout.curFolder)!
            do throws(Errno) {
                curFolder = try mailbox.openDirectory(cur)
            } catch .noSuchFileOrDirectory {
                // Made only now, never while watching: an MDA creating the folder would trip over it.
                try mailbox.makeDirectory(cur, permissions: 0o700)
                curFolder = try mailbox.openDirectory(cur)
            }
        } catch {
            logger.error("message delivered but cur/ cannot be opened: \(error)", metadata: ["path": "\(curPath)"])
            return
        }
        let curFD = curFolder.rawValue
        defer { curFolder.closeIgnoringErrors() }
        do {
            switch try MaildirMessageName.markRead(
                message.arrival.name, newFolder: message.newFolder.descriptor, curFolder: .init(rawValue: curFD),
                describing: message.path
            ) {
            case .moved(let name):
                logger.debug("message marked read", metadata: ["path": "\(curPath)/\(InboxNames.display(name))"])
            case .vanished:
                break
            case .nameTaken(let name):
                reportOnce(message.path, inbox: message.arrival.folder.inbox, identity: nil, "message delivered but left in new/: cur/\(InboxNames.display(name)) exists")
            }
        } catch {
            logger.error("message delivered but not marked read: \(error)", metadata: ["path": "\(message.path)"])
        }
    }

    /// Logs a problem with a message once per message (by path and identity), however often a
    /// rescan finds it, and counts it for status.
    func reportOnce(_ key: String, inbox: Int, identity: String?, _ text: String, part: String? = nil) {
        guard reportedMessages.insert(key + "|" + (identity ?? "")).inserted else { return }
        activity.unreadableMessage(inbox: inbox)
        var metadata: Logger.Metadata = ["path": "\(key)"]
        if let part { metadata["part"] = "\(part)" }
        logger.warning("\(text)", metadata: metadata)
    }
}
