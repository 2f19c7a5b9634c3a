import DocRouteHandlers
import DocRouteProtocol
import DocRouteTypes
import Foundation
import Logging

/// Takes files from the inboxes to the delivery backend: watch before scan, one queue, batches.
///
/// Every arrival is opened once without following links, typed from the name and its first bytes,
/// routed with the registry snapshot of the moment, and handed to the backend in batches so the
/// disk flushes are shared (group commit). Files nobody claims, links, FIFOs, devices and files
/// over the size limit go to quarantine with a reason. A full disk or a permission problem leaves
/// the source in the inbox and tries again later, with backoff.
actor IntakePipeline {
    let configuration: DaemonConfiguration
    let backend: any DeliveryBackend
    let watcher: InboxWatcher
    let logger: Logger
    let activity: DaemonActivity
    var routing: (@Sendable () -> RoutingDaemon.Routing)?
    var dispatcher: HandlerDispatcher?
    var queue = ArrivalQueue()
    /// Open descriptors of watched folders, by path.
    var folders: [String: Int32] = [:]
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

    var deliveredCount = 0
    let wake: AsyncStream<Void>
    let wakeContinuation: AsyncStream<Void>.Continuation
    var stopped = false
    static let batchLimit = 256
    /// File batches handed to the backend and not yet committed. Two: the next is copied while
    /// the previous one waits on its disk flushes; more would only hold more files open.
    static let batchesInFlightLimit = 2
    var batchesInFlight = 0
    var batchSlotWaiter: CheckedContinuation<Void, Never>?
    /// Arrivals were turned away because the queue held `max_queued_files` already (so a burst of
    /// 100,000 files does not make the daemon's memory grow with it): list the inboxes once the
    /// queue drains. The files wait in their inbox meanwhile; nothing is lost.
    var backlogLeftInInboxes = false

    init(configuration: DaemonConfiguration, backend: any DeliveryBackend, watcher: InboxWatcher, activity: DaemonActivity, logger: Logger) {
        self.activity = activity
        self.configuration = configuration
        self.backend = backend
        self.watcher = watcher
        self.logger = logger
        (wake, wakeContinuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Watches and scans every inbox; events start flowing into the queue.
    func start(routing: @escaping @Sendable () -> RoutingDaemon.Routing, dispatcher: HandlerDispatcher) async {
        self.routing = routing
        self.dispatcher = dispatcher
        if configuration.inboxes.contains(where: { $0.kind == .maildir }) {
            do {
                mailReader = try MaildirMessageReader(stateDirectory: configuration.stateDirectory,
                                                      maximumAttachmentSize: configuration.maxFileSize, logger: logger)
            } catch {
                logger.error("maildir inboxes are not served: \(error)")
            }
        }
        for index in configuration.inboxes.indices { watchInbox(index) }
        activity.rescanned(.startup)
        let events = watcher.events
        Task { [weak self] in
            for await event in events { await self?.handle(event) }
        }
    }

    /// Answers when the actor is free: the watchdog's proof of life.
    func heartbeat() {}

    func stop() {
        stopped = true
        wakeContinuation.finish()
        for (_, fd) in folders { close(fd) }
        folders.removeAll()
    }

    /// The intake loop: runs until ``stop()``.
    func run() async {
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
                for index in configuration.inboxes.indices { scanInbox(index) }
                activity.rescanned(.backlog)
            }
        }
    }

    /// The queue holds `max_queued_files` and turned an arrival away: a listing stops there (what
    /// it did not read waits in its folder for the listing made once the queue drains).
    var queueIsFull: Bool { backlogLeftInInboxes && queue.count >= configuration.maxQueuedFiles }

    func enqueue(_ arrival: ArrivalQueue.Arrival) {
        guard queue.count < configuration.maxQueuedFiles else {
            backlogLeftInInboxes = true
            return
        }
        if queue.push(arrival) { activity.queued(arrival) }
        wakeContinuation.yield()
    }

    func handle(_ event: InboxWatcher.Event) {
        switch event {
        case .arrived(let folder, let name):
            if folder.role == .drop || folder.role == .maildirNew { enqueue(.init(folder: folder, name: name)) }
        case .created(let folder, let name):
            // An MDA of the original Maildir kind (qmail, Python's mailbox) links the finished
            // message from tmp/ into new/: a complete file that sees no close-after-write.
            if folder.role == .maildirNew { return enqueue(.init(folder: folder, name: name)) }
            guard folder.role == .drop else { return }
            // Only entries that will never see a close-after-write are taken now.
            guard let fd = folders[folder.path] else { return }
            var info = stat()
            let found = (name.map { CChar(bitPattern: $0) } + [0]).withUnsafeBufferPointer {
                fstatat(fd, $0.baseAddress!, &info, AT_SYMLINK_NOFOLLOW) == 0
            }
            let kind = info.st_mode & S_IFMT
            // A new hard link to an existing file is complete at once and sees no close-after-write.
            let hardLink = kind == S_IFREG && info.st_nlink > 1
            if found && (hardLink || (kind != S_IFREG && kind != S_IFDIR)) { enqueue(.init(folder: folder, name: name)) }
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
            for index in configuration.inboxes.indices { scanInbox(index) }
            activity.rescanned(.overflow)
        case .folderGone(let folder):
            if let fd = folders.removeValue(forKey: folder.path) { close(fd) }
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
        if inbox.kind == .maildir { return watchMaildir(index) }
        do {
            try prepareInbox(inbox)
            let folder = WatchedFolder(inbox: index, mailbox: nil, path: inbox.path)
            try watcher.watch(folder)
            guard openFolder(folder.path) != nil else { return }
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
            logger.critical("inbox is not writable by docrouted (uid \(getuid())): files found there cannot be taken; give the folder to docrouted's user or its group with write permission",
                            metadata: ["path": "\(inbox.path)"])
            throw DaemonFolder.Failure(path: inbox.path, description: "the inbox \(inbox.path) is not writable by uid \(getuid())")
        }
    }

    func scanInbox(_ index: Int) {
        let inbox = configuration.inboxes[index]
        if inbox.kind == .maildir { return scanMaildir(index) }
        let root = WatchedFolder(inbox: index, mailbox: nil, path: inbox.path)
        guard let fd = folders[inbox.path] ?? openFolder(inbox.path) else { return }
        var found = 0
        DirectoryListing.forEachEntry(of: fd) { entry in
            if entry.isDirectory {
                addMailbox(inbox: index, name: entry.name)
            } else if !InboxNames.isInProgress(entry.name) {
                enqueue(.init(folder: root, name: entry.name))
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
        guard let fd = folders[folder.path] ?? openFolder(folder.path) else { return }
        DirectoryListing.forEachEntry(of: fd) { entry in
            guard !InboxNames.isInProgress(entry.name) else { return true }
            if entry.isDirectory && !isPackageFolder(entry.name) {
                nestedFolderAppeared(in: folder, name: entry.name)
            } else {
                enqueue(.init(folder: folder, name: entry.name))
            }
            return !queueIsFull
        }
    }

    func openFolder(_ path: String) -> Int32? {
        if let fd = folders[path] { return fd }
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            logger.error("folder cannot be opened: \(String(cString: strerror(errno)))", metadata: ["path": "\(path)"])
            return nil
        }
        folders[path] = fd
        return fd
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
        for arrival in batch where arrival.folder.role == .drop {
            guard !InboxNames.isInProgress(arrival.name), let folderFD = folders[arrival.folder.path] else { continue }
            let inbox = configuration.inboxes[arrival.folder.inbox]
            let mailbox = arrival.folder.mailbox ?? inbox.defaultMailbox
            let display = InboxNames.display(arrival.name)
            let path = arrival.folder.path + "/" + display
            switch IntakeFile.open(name: arrival.name, in: folderFD, maxSize: configuration.maxFileSize) {
            case .failure(.vanished):
                continue
            case .failure(.directory):
                if isPackageFolder(arrival.name) {
                    await deliverPackage(arrival, in: folderFD, snapshot: snapshot)
                } else if arrival.folder.mailbox == nil {
                    addMailbox(inbox: arrival.folder.inbox, name: arrival.name)
                }
                continue
            case .failure(.unreadable(let code)):
                logger.error("file cannot be read; will try again", metadata: ["path": "\(path)", "error": "\(String(cString: strerror(code)))"])
                scheduleRetry(arrival)
            case .failure(let refusal):
                await quarantine(arrival, folder: folderFD, mailbox: mailbox, reason: "not delivered: \(refusal)")
            case .success(let file):
                if file.linkCount > 1 {
                    close(file.descriptor)
                    await quarantine(arrival, folder: folderFD, mailbox: mailbox,
                                     reason: "not delivered: it has \(file.linkCount) hard links, so whoever dropped it may not own its content")
                    continue
                }
                let classification = snapshot.engine.classify(filename: display, head: file.head)
                guard let handler = snapshot.selector.chooseHandler(contentType: classification.contentType, innerContentType: classification.innerContentType) else {
                    close(file.descriptor)
                    let parents = classification.conformsTo.prefix(3).joined(separator: ", ")
                    await quarantine(arrival, folder: folderFD, mailbox: mailbox,
                                     reason: Self.noHandlerReason(classification.contentType, parents: parents))
                    continue
                }
                let container = handler.manifest.container ?? configuration.containersDirectory + "/" + handler.bundleIdentifier
                deliveries.append(DocumentDelivery(
                    source: file, sourceFolder: folderFD, sourceName: arrival.name, sourcePath: path,
                    containerRoot: container, mailbox: mailbox, extensionChain: classification.extensionChain,
                    contentType: classification.contentType, bundleIdentifier: handler.bundleIdentifier,
                    owner: HandlerLauncher.copyOwner(for: handler.manifest.user),
                    sourceApplication: inbox.sourceApplication,
                    // mailbox, originalFilename and size are added by the delivery itself.
                    annotation: [:]))
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
        for (index, outcome) in outcomes.enumerated() {
            let delivery = deliveries[index]
            close(delivery.source.descriptor)
            switch outcome {
            case .committed(let deliveryID, let finalPath, _, _):
                deliveredCount += 1
                attempts[arrivals[index]] = nil
                touched.insert(delivery.bundleIdentifier)
                logger.info("delivered", metadata: [
                    "message-id": "delivered", "delivery-id": "\(deliveryID)", "bundle-id": "\(delivery.bundleIdentifier)",
                    "mailbox": "\(delivery.mailbox)", "path": "\(finalPath)", "content-type": "\(delivery.contentType)",
                ])
            case .alreadyDelivered(let deliveryID):
                attempts[arrivals[index]] = nil
                logger.info("source delivered before a crash removed now", metadata: ["delivery-id": "\(deliveryID)", "path": "\(delivery.sourcePath)"])
            case .failed(let message, let retryable):
                logger.error("delivery failed\(retryable ? "; will try again" : ""): \(message)", metadata: [
                    "bundle-id": "\(delivery.bundleIdentifier)", "path": "\(delivery.sourcePath)",
                ])
                if retryable { scheduleRetry(arrivals[index]) }
            }
        }
        for bundle in touched.sorted() { await dispatcher?.committed(bundleIdentifier: bundle) }
    }

    func quarantine(_ arrival: ArrivalQueue.Arrival, folder: Int32, mailbox: String, reason: String) async {
        do {
            try await backend.quarantine(name: arrival.name, in: folder, mailbox: mailbox, reason: reason,
                                         origin: "\(arrival.folder.path)/\(InboxNames.display(arrival.name))")
            activity.quarantined(inbox: arrival.folder.inbox, reason: reason, arrival: arrival)
            logger.warning("quarantined: \(reason)", metadata: [
                "message-id": "quarantined", "mailbox": "\(mailbox)", "path": "\(arrival.folder.path)/\(InboxNames.display(arrival.name))",
            ])
        } catch {
            logger.error("could not quarantine (\(reason)): \(error); will try again", metadata: ["path": "\(arrival.folder.path)/\(InboxNames.display(arrival.name))"])
            scheduleRetry(arrival)
        }
    }

    /// Reports a batch's arrivals settled, except those set aside to be tried again.
    func settle(_ batch: [ArrivalQueue.Arrival]) {
        activity.settled(retrying.isEmpty ? batch : batch.filter { !retrying.contains($0) })
    }

    /// Queues `arrival` again after a backoff (1 s doubling to 60 s), once it has been left alone
    /// for ``quietPeriod``. It counts as waiting meanwhile.

    /// Counts a document committed for an `open` request: "delivered since start" counts every
    /// committed delivery, as "delivered today" does, not only the inboxes'.
    func countOpened() {
        deliveredCount += 1
    }

    /// The reason for a file nobody claims. A default cannot help (it only picks among handlers
    /// that claim the type), so the advice is a handler, then a release.
    static func noHandlerReason(_ contentType: String, parents: String, package: Bool = false) -> String {
        "no handler claims \(package ? "the package " : "")\(contentType) (conforms to \(parents)); install a handler whose Info.plist claims "
            + "it or a type it conforms to (LSItemContentTypes), then run docroutectl quarantine release with this file's path"
    }

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
        guard let fd = folders[arrival.folder.path] else { return nil }
        var info = stat()
        let found = (arrival.name.map { CChar(bitPattern: $0) } + [0]).withUnsafeBufferPointer {
            fstatat(fd, $0.baseAddress!, &info, AT_SYMLINK_NOFOLLOW) == 0
        }
        guard found else { return nil }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let changed = Duration.seconds(info.st_ctim.tv_sec) + .nanoseconds(info.st_ctim.tv_nsec)
        return max(.zero, Duration.seconds(now.tv_sec) + .nanoseconds(now.tv_nsec) - changed)
    }
}
