import DocRouteConfiguration
import DocRouteHandlers
import DocRouteMaildir
import DocRoutePlatform
import DocRouteProtocol
import DocRouteTypes
import Foundation
import Logging
import SystemPackage

/// Takes files from the inboxes to the delivery backend: watch before scan, one queue, batches.
///
/// Every arrival is opened once without following links, typed from the name and its first bytes,
/// routed with the registry snapshot of the moment, and handed to the backend in batches so the
/// disk flushes are shared (group commit). Files nobody claims, links, FIFOs, devices and files
/// over the size limit go to quarantine with a reason. A full disk or a permission problem leaves
/// the source in the inbox and tries again later, with backoff.
package actor IntakePipeline {
    /// The configuration of the moment: a reload replaces it (``reconfigure(_:)``).
    var configuration: DaemonConfiguration
    let backend: any DeliveryBackend
    let watcher: InboxWatcher
    let logger: Logger
    let activity: any IntakeObserver
    var routing: (@Sendable () -> RoutingSnapshot)?
    /// Tells the dispatcher that a handler has new deliveries (set by the daemon at start).
    var onCommitted: (@Sendable (_ bundleIdentifier: String) async -> Void)?
    var queue = ArrivalQueue()
    /// The inbox roots held open, and the folders below them opened when used.
    var folders = IntakeFolders()
    /// The folders watched in each inbox (mailboxes, folders inside them, a Maildir's folders), by
    /// path, for `max_mailboxes`.
    var watchedFolders: [Int: Set<String>] = [:]
    /// Folders of each inbox not served because the inbox has `max_mailboxes` already.
    var foldersNotServed: [Int: Set<String>] = [:]
    /// Inboxes to be listed again once folders went away under `max_mailboxes`.
    var relistScheduled: Set<Int> = []
    var attempts: [ArrivalQueue.Arrival: Int] = [:]
    /// Arrivals set aside to be tried again: they still wait in their inbox, and are counted so.
    var retrying: Set<ArrivalQueue.Arrival> = []
    /// How long a file must have been left alone (its ctime) before a retry takes it: a file
    /// changed during its copy (truncated, touched) sees no close-after-write afterwards.
    static let quietPeriod: Duration = .seconds(2)
    /// Reads Maildir messages into scratch files; nil when no inbox is a Maildir.
    var mailReader: MaildirMessageReader?
    /// Messages (and parts) already reported as not deliverable, so a rescan does not repeat it.
    var reportedMessages: Set<String> = []

    package var deliveredCount = 0
    let wake: AsyncStream<Void>
    let wakeContinuation: AsyncStream<Void>.Continuation
    var stopped = false
    static let batchLimit = DaemonConfiguration.intakeBatchLimit
    /// File batches handed to the backend and not yet committed. Two: the next is copied while
    /// the previous one waits on its disk flushes; more would only hold more files open.
    static let batchesInFlightLimit = 2
    var batchesInFlight = 0
    var batchSlotWaiter: CheckedContinuation<Void, Never>?
    /// Arrivals were turned away because the queue held `max_queued_files` already (so a burst of
    /// 100,000 files does not make the daemon's memory grow with it): list the inboxes once the
    /// queue drains. The files wait in their inbox meanwhile; nothing is lost.
    var backlogLeftInInboxes = false

    package init(configuration: DaemonConfiguration, backend: any DeliveryBackend, watcher: InboxWatcher, activity: any IntakeObserver, logger: Logger) {
        self.activity = activity
        self.configuration = configuration
        self.backend = backend
        self.watcher = watcher
        self.logger = logger
        (wake, wakeContinuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Watches and scans every inbox; events start flowing into the queue.
    ///
    /// - Parameters:
    ///   - routing: the routing snapshot of the moment, taken once per batch.
    ///   - committed: called with a handler's bundle identifier once deliveries to it are committed.
    package func start(routing: @escaping @Sendable () -> RoutingSnapshot,
               committed: @escaping @Sendable (_ bundleIdentifier: String) async -> Void) async {
        self.routing = routing
        self.onCommitted = committed
        for (index, _) in configuration.servedInboxes { watchInbox(index) }
        activity.rescanned(.startup)
        let events = watcher.events
        Task { [weak self] in
            for await event in events { await self?.handle(event) }
        }
    }

    /// Answers when the actor is free: the watchdog's proof of life.
    package func heartbeat() {}

    package func stop() {
        stopped = true
        wakeContinuation.finish()
        folders.removeAll()
    }

    /// The intake loop: runs until ``stop()``.
    package func run() async {
        for await _ in wake {
            while !queue.isEmpty && !stopped {
                await process(queue.pop(limit: Self.batchLimit))
            }
            if stopped { return }
            // Listed only once nothing is in flight, so the listing does not find files that are
            // being delivered (they would be opened again only to be found delivered).
            if backlogLeftInInboxes && batchesInFlight == 0 {
                backlogLeftInInboxes = false
                // The last batch's sources are removed after its commit: let that finish first.
                await backend.settle()
                if stopped { return }
                logger.info("listing the inboxes again for the files left waiting there (more arrived than max_queued_files, \(configuration.maxQueuedFiles))")
                for (index, _) in configuration.servedInboxes { scanInbox(index) }
                activity.rescanned(.backlog)
            }
        }
    }

    /// The queue holds `max_queued_files` and turned an arrival away: a listing stops there (what
    /// it did not read waits in its folder for the listing made once the queue drains).
    var queueIsFull: Bool { backlogLeftInInboxes && queue.count >= configuration.maxQueuedFiles }

    func enqueue(_ arrival: ArrivalQueue.Arrival) {
        // A sender's temporary name (`.incoming-…`, `….part`) reports its close-after-write like
        // any file. It is not a document: queued, it would take a place in `max_queued_files` and
        // count in `waiting` and the progress total as a file that never settles as delivered.
        if arrival.folder.role == .drop && InboxNames.isInProgress(arrival.name) { return }
        guard queue.count < configuration.maxQueuedFiles else {
            backlogLeftInInboxes = true
            return
        }
        if queue.push(arrival) { activity.queued(arrival) }
        wakeContinuation.yield()
    }

    func handle(_ event: InboxWatcher.Event) {
        // A retired inbox's last events, read before its watches went.
        if let inbox = event.folder?.inbox, configuration.inboxes[inbox].retired { return }
        switch event {
        case .arrived(let folder, let name):
            if folder.role == .drop || folder.role == .maildirNew { enqueue(.init(folder: folder, name: name)) }
        case .created(let folder, let name):
            // An MDA of the original Maildir kind (qmail, Python's mailbox) links the finished
            // message from tmp/ into new/: a complete file that sees no close-after-write.
            if folder.role == .maildirNew { return enqueue(.init(folder: folder, name: name)) }
            guard folder.role == .drop else { return }
            // Only entries that will never see a close-after-write are taken now.
            guard let component = FilePath.Component(platformBytes: name), let handle = open(folder) else { return }
            // Gone, or not to be inspected now: its close-after-write, or the next scan, brings it.
            guard let found = try? handle.descriptor.status(of: component) else { return }
            // A new hard link to an existing file is complete at once and sees no close-after-write.
            let hardLink = found.isRegularFile && found.linkCount > 1
            if hardLink || (!found.isRegularFile && !found.isDirectory) { enqueue(.init(folder: folder, name: name)) }
        case .folderAppeared(let folder, let name, let movedIn):
            switch folder.role {
            case .drop: folderAppeared(in: folder, name: name, movedIn: movedIn)
            case .maildirRoot: maildirEntryAppeared(folder.inbox, name: name)
            case .maildirFolder: if name == Array(MaildirLayout.newFolder.utf8) { maildirNewAppeared(in: folder) }
            case .maildirNew: break
            }
        case .removed:
            break
        case .overflow:
            for (index, _) in configuration.servedInboxes { scanInbox(index) }
            activity.rescanned(.overflow)
        case .folderGone(let folder):
            folders.forget(folder.path)
            folderUnwatched(folder)
            if folder.role == .maildirRoot || (folder.role == .drop && folder.mailbox == nil) {
                logger.warning("inbox folder went away; re-creating and watching it again", metadata: ["path": "\(folder.path)"])
                watchInbox(folder.inbox)
                activity.rescanned(.inboxRecreated)
            }
        }
    }

    /// Creates the inbox if needed, watches it, then scans it (in that order, so nothing that lands
    /// between the two is missed).
    func watchInbox(_ index: Int) {
        let inbox = configuration.inboxes[index]
        if inbox.kind == .maildir && mailReader == nil {
            do {
                mailReader = try MaildirMessageReader(stateDirectory: configuration.stateDirectory,
                                                      maximumAttachmentSize: configuration.maxFileSize, logger: logger)
            } catch {
                logger.error("maildir inboxes are not served: \(error)")
                return
            }
        }
        if inbox.kind == .maildir { return watchMaildir(index) }
        do {
            try prepareInbox(inbox)
            let folder = WatchedFolder(inbox: index, mailbox: nil, path: inbox.path)
            try watcher.watch(folder)
            guard open(folder) != nil else { return }
        } catch {
            logger.error("inbox cannot be watched: \(error)", metadata: ["path": "\(inbox.path)"])
            return
        }
        scanInbox(index)
    }

    /// Creates a missing inbox, saying so, and says loudly when docrouted cannot write it: every
    /// file would then be delivered and left behind (its source cannot be removed), again after
    /// each restart.
    func prepareInbox(_ inbox: InboxConfiguration) throws {
        if try DaemonFolder.create(inbox.path, what: "inbox") {
            logger.notice("inbox did not exist; created it", metadata: ["path": "\(inbox.path)"])
        }
        if !DaemonFolder.isWritable(inbox.path) {
            logger.critical("inbox is not writable by docrouted (uid \(ProcessIdentity.realUserID)): files found there cannot be taken; give the folder to docrouted's user or its group with write permission",
                            metadata: ["path": "\(inbox.path)"])
            throw DaemonFolder.Failure(path: inbox.path, description: "the inbox \(inbox.path) is not writable by uid \(ProcessIdentity.realUserID)")
        }
    }

    func scanInbox(_ index: Int) {
        let inbox = configuration.inboxes[index]
        if inbox.kind == .maildir { return scanMaildir(index) }
        let root = WatchedFolder(inbox: index, mailbox: nil, path: inbox.path)
        guard let handle = open(root) else { return }
        var found = 0
        forEachListed(of: handle.descriptor, path: inbox.path) { entry in
            let name = entry.nameBytes
            if entry.isDirectory {
                addMailbox(inbox: index, name: name)
            } else if !InboxNames.isInProgress(name) {
                enqueue(.init(folder: root, name: name))
                found += 1
            }
            return !queueIsFull
        }
        if found > 0 { logger.info("scan found waiting files", metadata: ["path": "\(inbox.path)", "count": "\(found)"]) }
    }

    func addMailbox(inbox index: Int, name: [UInt8], attempt: Int = 0) {
        let mailbox = InboxNames.display(name)
        guard DaemonConfiguration.isValidMailbox(mailbox), !InboxNames.isInProgress(name),
              Array(mailbox.utf8) == name else {
            logger.warning("folder ignored: its name cannot be a mailbox", metadata: ["name": "\(mailbox)"])
            return
        }
        guard !isPackageFolder(name) else {
            // A package found by a scan is complete (see folderAppeared(in:name:movedIn:)).
            return enqueue(.init(folder: WatchedFolder(inbox: index, mailbox: nil, path: configuration.inboxes[index].path), name: name))
        }
        let path = configuration.inboxes[index].path + "/" + mailbox
        let folder = WatchedFolder(inbox: index, mailbox: mailbox, path: path)
        guard admitWatch(folder) else { return }
        do {
            try watcher.watch(folder)
        } catch {
            guard mailboxNotWatched(folder, name: name, error: error, attempt: attempt) else { return }
        }
        queueEntries(of: folder)
    }

    /// Queues what a watched mailbox folder holds: its files and packages, and the plain folders
    /// inside it (watched and listed in turn). Called once the folder's watch is in place, so a
    /// file landing in between is seen either way.
    func queueEntries(of folder: WatchedFolder) {
        guard let handle = open(folder) else { return }
        forEachListed(of: handle.descriptor, path: folder.path) { entry in
            let name = entry.nameBytes
            guard !InboxNames.isInProgress(name) else { return true }
            if entry.isDirectory && !isPackageFolder(name) {
                nestedFolderAppeared(in: folder, name: name)
            } else {
                enqueue(.init(folder: folder, name: name))
            }
            return !queueIsFull
        }
    }

    /// Hands the entries of a watched folder to `body` as they are read, until it returns false (a
    /// full queue: the rest wait in the folder, listed again once the queue drains; a folder of
    /// 100,000 files is never held in memory whole). A folder that cannot be read is logged and
    /// taken as empty for this scan: its watch stays, so the next file arriving there is seen, and
    /// the next start scans it again.
    func forEachListed(of folder: FileDescriptor, path: String, _ body: (DirectoryEntry) -> Bool) {
        do {
            try folder.forEachDirectoryEntry(body)
        } catch {
            logger.error("folder cannot be listed; files already waiting there are taken at the next start: \(error)", metadata: ["path": "\(path)"])
        }
    }

    /// The watched folder, open; nil (and an error in the log) when it cannot be opened.
    func open(_ folder: WatchedFolder) -> DirectoryHandle? {
        do {
            return try folders.open(folder.path, root: configuration.inboxes[folder.inbox].path)
        } catch {
            logger.error("folder cannot be opened: \(error)", metadata: ["path": "\(folder.path)"])
            return nil
        }
    }

    /// Waits until fewer than ``batchesInFlightLimit`` file batches are in flight, then takes a
    /// slot (``run()`` is the only caller, so there is at most one waiter).
    func takeBatchSlot() async {
        while batchesInFlight >= Self.batchesInFlightLimit {
            await withCheckedContinuation { batchSlotWaiter = $0 }
        }
        batchesInFlight += 1
    }

    func releaseBatchSlot() {
        batchesInFlight -= 1
        batchSlotWaiter.take()?.resume()
    }

    /// Takes a batch of arrivals to the backend: returns once its files are handed over, before
    /// they are committed (``finish(_:deliveries:arrivals:outcomes:started:opening:)`` runs then).
    func process(_ batch: [ArrivalQueue.Arrival]) async {
        await takeBatchSlot()
        var handedOver = false
        defer {
            if !handedOver {
                releaseBatchSlot()
                settle(batch)
            }
        }
        guard let snapshot = routing?() else { return }
        let messages = batch.filter { $0.folder.role == .maildirNew }
        if !messages.isEmpty {
            for start in stride(from: 0, to: messages.count, by: Self.messageBatchLimit) {
                await processMessages(Array(messages[start..<min(messages.count, start + Self.messageBatchLimit)]), snapshot: snapshot)
            }
        }
        var deliveries: [DocumentDelivery] = []
        var arrivals: [ArrivalQueue.Arrival] = []
        // The step `open` of the debug log's step timings (opening, typing, choosing the handler),
        // read once per batch.
        let openingStarted = ContinuousClock.now
        for arrival in batch where arrival.folder.role == .drop && !configuration.inboxes[arrival.folder.inbox].retired {
            guard let folder = open(arrival.folder) else { continue }
            let folderFD = folder.descriptor.rawValue
            let inbox = configuration.inboxes[arrival.folder.inbox]
            let mailbox = arrival.folder.mailbox ?? inbox.defaultMailbox
            let display = InboxNames.display(arrival.name)
            let path = arrival.folder.path + "/" + display
            switch IntakeFile.open(name: arrival.name, in: folderFD, maxSize: configuration.maxFileSize,
                                   maxAllocation: configuration.maxFileAllocation) {
            case .failure(.vanished):
                continue
            case .failure(.directory):
                if isPackageFolder(arrival.name) {
                    await deliverPackage(arrival, in: folder, snapshot: snapshot)
                } else if arrival.folder.mailbox == nil {
                    addMailbox(inbox: arrival.folder.inbox, name: arrival.name)
                }
                continue
            case .failure(.unreadable(let code)):
                logger.error("file cannot be read; will try again", metadata: ["path": "\(path)", "error": "\(Errno(rawValue: code))"])
                scheduleRetry(arrival)
            case .failure(let refusal):
                await quarantine(arrival, folder: folderFD, mailbox: mailbox, reason: "not delivered: \(refusal)")
            case .success(let file):
                if file.linkCount > 1 {
                    file.closeDescriptor()
                    await quarantine(arrival, folder: folderFD, mailbox: mailbox,
                                     reason: "not delivered: it has \(file.linkCount) hard links, so whoever dropped it may not own its content")
                    continue
                }
                let route = snapshot.route(head: file.head, name: display)
                let classification = route.classification
                guard case .success(let handler) = route.handler else {
                    file.closeDescriptor()
                    if waitsForUnreadableManifests(arrival, snapshot: snapshot, contentType: classification.contentType) { continue }
                    let parents = classification.conformsTo.prefix(3).joined(separator: ", ")
                    await quarantine(arrival, folder: folderFD, mailbox: mailbox,
                                     reason: Self.noHandlerReason(classification.contentType, parents: parents))
                    continue
                }
                deliveries.append(snapshot.delivery(
                    of: file, to: handler, classification: classification, sourceFolder: folder, sourceName: arrival.name,
                    sourcePath: path, mailbox: mailbox, sourceApplication: inbox.sourceApplication))
                arrivals.append(arrival)
            }
        }
        guard !deliveries.isEmpty else { return }
        let started = ContinuousClock.now
        let opening = started - openingStarted
        let ticket = backend.submit(deliveries)
        handedOver = true
        Task {
            let outcomes = await ticket.outcomes
            await finish(batch, deliveries: deliveries, arrivals: arrivals, outcomes: outcomes, started: started, opening: opening)
        }
    }

    /// A file batch is committed (or failed): counts, logs, retries, and handlers told.
    func finish(_ batch: [ArrivalQueue.Arrival], deliveries: [DocumentDelivery], arrivals: [ArrivalQueue.Arrival],
                outcomes: [DocumentDeliveryOutcome], started: ContinuousClock.Instant, opening: Duration = .zero) async {
        releaseBatchSlot()
        if backlogLeftInInboxes && batchesInFlight == 0 { wakeContinuation.yield() }
        defer { settle(batch) }
        activity.delivered(deliveries, outcomes, arrivals: arrivals)
        logger.debug("batch delivered", metadata: [
            "files": "\(deliveries.count)", "duration": "\(ContinuousClock.now - started)",
            "steps": "open=\(Int(opening / .microseconds(1)))us",
        ])
        var touched: Set<String> = []
        var waitingForRoom: (count: Int, first: DeliveryError)?
        for (index, outcome) in outcomes.enumerated() {
            let delivery = deliveries[index]
            switch outcome {
            case .failed(let error) where error.code == .overLimit:
                // The handler is owed as much as it may be: the file waits in its inbox. Said once
                // a batch, not once a file (a backlog of thousands is tried again every minute).
                waitingForRoom = (count: (waitingForRoom?.count ?? 0) + 1, first: waitingForRoom?.first ?? error)
                scheduleRetry(arrivals[index])
            case .committed(let deliveryID, let finalPath, _, _):
                attempts[arrivals[index]] = nil
                touched.insert(delivery.bundleIdentifier)
                recordCommitted(delivery, deliveryID: deliveryID, finalPath: finalPath)
            case .alreadyDelivered(let deliveryID):
                attempts[arrivals[index]] = nil
                logger.info("source delivered before a crash removed now", metadata: [
                    "delivery-id": "\(deliveryID.lowercased())", "original-name": "\(delivery.originalName)", "path": "\(delivery.sourcePath)",
                ])
            case .failed(let error):
                logger.error("delivery failed\(error.isRetryable ? "; will try again" : ""): \(error)", metadata: [
                    "bundle-id": "\(delivery.bundleIdentifier)", "path": "\(delivery.sourcePath)", "code": "\(error.code)",
                    "original-name": "\(delivery.originalName)",
                ])
                if error.isRetryable { scheduleRetry(arrivals[index]) }
            }
        }
        if let waitingForRoom {
            logger.notice("\(waitingForRoom.count) files wait in their inbox, tried again later: \(waitingForRoom.first.message)")
        }
        for bundle in touched.sorted() { await onCommitted?(bundle) }
    }

    /// Counts and logs one committed delivery (the journal's `delivered` message), with where the
    /// document came from and the name it came with.
    func recordCommitted(_ delivery: DocumentDelivery, deliveryID: String, finalPath: String) {
        deliveredCount += 1
        var metadata: Logger.Metadata = [
            "message-id": "delivered", "delivery-id": "\(deliveryID.lowercased())", "bundle-id": "\(delivery.bundleIdentifier)",
            "mailbox": "\(delivery.mailbox)", "path": "\(finalPath)", "content-type": "\(delivery.contentType)",
            "original-name": "\(delivery.originalName)",
        ]
        // A mail part's source is a scratch file: the message it came from says more.
        if let message = delivery.messageID { metadata["mail-message-id"] = "\(message)" } else { metadata["source"] = "\(delivery.sourcePath)" }
        if let part = delivery.partPath { metadata["mail-part"] = "\(part)" }
        logger.info("delivered", metadata: metadata)
    }

    func quarantine(_ arrival: ArrivalQueue.Arrival, folder: Int32, mailbox: String, reason: String) async {
        do {
            try await backend.quarantine(name: arrival.name, in: folder, mailbox: mailbox, reason: reason,
                                         origin: "\(arrival.folder.path)/\(InboxNames.display(arrival.name))")
            activity.quarantined(inbox: arrival.folder.inbox, reason: reason, arrival: arrival)
            logger.warning("quarantined: \(reason)", metadata: [
                "message-id": "quarantined", "mailbox": "\(mailbox)", "path": "\(arrival.folder.path)/\(InboxNames.display(arrival.name))",
                "original-name": "\(InboxNames.display(arrival.name))",
            ])
        } catch {
            logger.error("could not quarantine (\(reason)): \(error); will try again", metadata: [
                "path": "\(arrival.folder.path)/\(InboxNames.display(arrival.name))", "original-name": "\(InboxNames.display(arrival.name))",
            ])
            scheduleRetry(arrival)
        }
    }

    /// Reports a batch's arrivals settled, except those set aside to be tried again.
    func settle(_ batch: [ArrivalQueue.Arrival]) {
        activity.settled(retrying.isEmpty ? batch : batch.filter { !retrying.contains($0) })
    }

    /// Delivers one document that did not come from an inbox (`open`), by the path an inbox's
    /// files take: handed to the backend, reported, counted, its handler told once it is committed.
    /// The backend closes the document's descriptor (``DeliveryBackend/submit(_:)``).
    package func deliverRequested(_ delivery: DocumentDelivery) async -> DocumentDeliveryOutcome? {
        let outcome = await backend.deliver([delivery]).first
        activity.delivered([delivery], outcome.map { [$0] } ?? [], arrivals: [])
        if case .committed(let deliveryID, let finalPath, _, _)? = outcome {
            // Counted and logged as an inbox's file is: the `delivered` line with its id and name.
            recordCommitted(delivery, deliveryID: deliveryID, finalPath: finalPath)
            await onCommitted?(delivery.bundleIdentifier)
        }
        return outcome
    }

    /// Counts a document committed for an `open` request: "delivered since start" counts every
    /// committed delivery, as "delivered today" does, not only the inboxes'.
    package func countOpened() {
        deliveredCount += 1
    }

    /// The reason for a file nobody claims. A default cannot help (it only picks among handlers
    /// that claim the type), so the advice is a handler, then a release.
    static func noHandlerReason(_ contentType: String, parents: String, package: Bool = false, mailPart: Bool = false) -> String {
        "no handler claims \(package ? "the package " : "")\(contentType) (conforms to \(parents)); install a handler whose Info.plist claims "
            + "it or a type it conforms to (LSItemContentTypes), then run docroutectl quarantine release with this \(mailPart ? "entry" : "file")'s path"
    }

    /// Queues `arrival` again after a backoff (1 s doubling to 60 s), once it has been left alone
    /// for ``quietPeriod``. It counts as waiting meanwhile.
    func scheduleRetry(_ arrival: ArrivalQueue.Arrival) {
        let count = (attempts[arrival] ?? 0) + 1
        attempts[arrival] = count
        retrying.insert(arrival)
        let seconds = min(60, 1 << min(count - 1, 6))
        Task { [weak self] in
            try? await Task.sleep(for: .seconds(seconds))
            await self?.retryWhenQuiet(arrival)
        }
    }

    func retryWhenQuiet(_ arrival: ArrivalQueue.Arrival) async {
        while !stopped, let since = timeSinceLastChange(arrival), since < Self.quietPeriod {
            try? await Task.sleep(for: Self.quietPeriod - since)
        }
        retrying.remove(arrival)
        guard !stopped else { return }
        enqueue(arrival)
    }

    /// Time since the file's inode last changed (`st_ctime`: data, size, times or mode); nil
    /// when it is gone (the retry then finds it gone and settles it).
    func timeSinceLastChange(_ arrival: ArrivalQueue.Arrival) -> Duration? {
        guard let component = FilePath.Component(platformBytes: arrival.name), let folder = open(arrival.folder),
              let info = try? folder.descriptor.stat(of: component) else { return nil }
        let changed = Duration.seconds(info.st_ctim.tv_sec) + .nanoseconds(info.st_ctim.tv_nsec)
        return max(.zero, SystemClock.realTime.now() - changed)
    }
}
