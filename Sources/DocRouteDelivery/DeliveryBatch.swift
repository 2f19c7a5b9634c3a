import DocRouteHandlers
import DocRouteIntake
import DocRouteLedger
import DocRoutePlatform
import Foundation
import Logging
import Synchronization
import SystemPackage

/// Delivers files into handlers' sandboxes in groups, with one flush per group instead of one per
/// file, and records them in the ledger; nothing is lost or delivered twice whatever crashes when.
///
/// For a batch of requests:
/// 0. a source that was delivered before but left in its inbox (a crash between commit and
///    removal) is removed instead of delivered twice (``Outcome/alreadyDelivered(_:)``);
/// 1. each source is copied to a temporary (`.docroute-<random>.tmp`) in its mailbox folder,
///    hashed on the way; a failure concerns only that request and leaves its source in place;
/// 2. one `syncfs` per destination file system makes all copies durable;
/// 3. one transaction stages the ledger rows (final name chosen, temporary recorded);
/// 4. each temporary is renamed to its final name without replacing anything (a name taken
///    meanwhile gets the next counter, recorded first), and each folder is synced once;
/// 5. one transaction commits the rows, giving them their sequence: from here on a handler is
///    owed the event, and only now is a request reported `committed`;
/// 6. the sources are taken out of their inboxes (only if the inbox name still holds the same,
///    unchanged file): renamed aside for the ``SourceReclaimer``, or removed and each inbox
///    folder synced once. ``complete(_:committed:)`` hands this step back as a ``SourceRemoval``,
///    to run while the next batch commits.
///
/// A crash between any two steps is settled by ``recover(containerRoots:)`` at the next start.
///
/// Calls block (disk and SQLite) and are serialised: run them on a thread that may block, such as
/// a `NIOThreadPool`, one batch after the other.
package final class DeliveryBatch: Sendable {
    /// How copies are made durable before they get their final names.
    package enum DataSync: Sendable, Hashable {
        /// One `syncfs(2)` per destination file system for the whole batch (the default;
        /// measured much faster than a flush per file for small files).
        case fileSystem
        /// `fdatasync(2)` on each copy.
        case eachFile
    }

    /// Tuning.
    package struct Options: Sendable {
        /// How copies are made durable.
        package var dataSync: DataSync
        /// How bytes are copied.
        package var copyMethod: SandboxWriter.CopyMethod
        /// The copy buffer, at least 64 KiB.
        package var bufferSize: Int
        /// How many copies go into a mailbox folder before it is looked up again from its
        /// container root (see ``SandboxWriter/confirmInPlace(_:)``); at least 1.
        package var copiesBetweenFolderChecks: Int

        /// Creates options; the defaults are the measured best.
        package init(dataSync: DataSync = .fileSystem, copyMethod: SandboxWriter.CopyMethod = .default, bufferSize: Int = 1 << 20,
                     copiesBetweenFolderChecks: Int = 32) {
            self.dataSync = dataSync
            self.copyMethod = copyMethod
            self.bufferSize = max(64 * 1024, bufferSize)
            self.copiesBetweenFolderChecks = max(1, copiesBetweenFolderChecks)
        }
    }

    /// The ledger deliveries are recorded in: its batch and recovery parts.
    package let ledger: any BatchLedger & RecoveryLedger
    /// The tuning in effect.
    package let options: Options
    let writer: SandboxWriter
    /// Where committed sources go to be freed later; `nil`: they are removed at once.
    let reclaimer: SourceReclaimer?
    let logger: Logger
    let serial = Mutex(())

    /// Creates a batch deliverer writing to `ledger`.
    /// `folderMode` is given to sandbox folders the batch creates.
    /// `accessUserID` gets an ACL entry on what is handed to handlers (see
    /// ``SandboxWriter/accessUserID``): docrouted's uid when it is not root. With a `reclaimer`,
    /// delivered sources are renamed aside and freed later (see ``SourceReclaimer``).
    package init(ledger: any BatchLedger & RecoveryLedger, options: Options = Options(), folderMode: CModeT = 0o700,
                accessUserID: UInt32? = nil, reclaimer: SourceReclaimer? = nil, logger: Logger) {
        self.ledger = ledger
        self.options = options
        self.reclaimer = reclaimer
        var writer = SandboxWriter(copyMethod: options.copyMethod)
        writer.folderMode = folderMode
        writer.accessUserID = accessUserID
        self.writer = writer
        self.logger = logger
    }

    /// Delivers `requests` as one group commit and returns one outcome per request, in order.
    ///
    /// A request is `committed` only once its copy is in place under its final name and its
    /// ledger row is durably committed. A `failed` request left its source where it was.
    package func deliver(_ requests: [Request]) -> [Outcome] {
        deliver(requests, stoppingAfter: nil)
    }

    /// The first half of a delivery, steps 1 and 2: the copies made durable under temporary
    /// names, nothing in the ledger yet. It takes no lock, so the next batch can be copied on one
    /// thread while the previous one waits on its flushes in ``complete(_:committed:)`` on another.
    /// A crash now leaves only temporaries, which recovery removes.
    package func prepare(_ requests: [Request]) -> PreparedBatch {
        prepare(requests, stoppingAfter: .removeSources)
    }

    /// The second half, steps 0 and 3 to 6, run one batch at a time in the order the batches
    /// were prepared. The outcomes go to `committed` as soon as the ledger commit is durable,
    /// before the sources are removed from their inboxes: a handler hears of its documents one
    /// step sooner (a source still seen in its inbox meanwhile is found delivered and removed).
    /// A source delivered meanwhile by an earlier batch (the same file seen twice) is found here,
    /// its fresh copy dropped.
    ///
    /// Step 6, taking the sources out of their inboxes, is returned undone: run it with
    /// ``SourceRemoval/run()``, in batch order, on a thread of its own, so the next batch commits
    /// meanwhile (the lookup of step 0 allows for sources taken out while it runs).
    package func complete(_ batch: PreparedBatch, committed: @escaping ([Outcome]) -> Void) -> SourceRemoval {
        serial.withLock { _ in
            commitSteps(batch, stoppingAfter: .removeSources, beforePlacing: nil, committed: committed).removal
        }
    }

    /// Gives up a prepared batch (the worker is shutting down): its temporaries are removed and
    /// every request fails, its source still in its inbox.
    package func abandon(_ batch: PreparedBatch) -> [Outcome] {
        var batch = batch
        defer { batch.closeFolders() }
        return batch.items.indices.map { index in
            let error = DeliveryError(code: .io, message: "The delivery worker stopped; the source stays in its inbox.")
            fail(&batch.items[index], error)
            return .failed(error)
        }
    }

    /// The steps of a batch; tests stop after one to play a crash.
    enum Step: Int, Comparable {
        case copy, sync, stage, place, commit, removeSources

        static func < (lhs: Step, rhs: Step) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// One request on its way.
    struct Item: Sendable {
        var request: Request
        var folder: SandboxWriter.Folder?
        var folderKey: FolderKey
        var name: SandboxName
        var temporary: SandboxWriter.TemporaryFile?
        var finalName = ""
        var counter = 0
        var record: LedgerRecord?
        var placed = false
        var error: DeliveryError?
        /// The committed delivery of this very source, when a crash (or a failed removal) left
        /// the source behind: it is removed, not delivered again.
        var earlier: LedgerRecord?

        var isAlive: Bool { error == nil }
    }

    struct FolderKey: Hashable, Sendable {
        var root: FilePath
        var mailbox: String

        // FilePath hashes itself one byte at a time (a `Hasher.combine` call per byte: 2% of the
        // daemon's time in a burst, where each file looks its folder up several times): the
        // same bytes in one call. Equal paths have equal bytes, so equal keys hash alike.
        func hash(into hasher: inout Hasher) {
            root.withPlatformBytes { hasher.combine(bytes: $0) }
            hasher.combine(mailbox)
        }
    }

    /// An open folder, by what it is on disk rather than by its path.
    struct FolderIdentity: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    struct NameKey: Hashable {
        var folder: FolderKey
        var name: SandboxName
    }

    /// Delivers, stopping after `lastStep` without cleaning anything up, as a crash would;
    /// `beforePlacing` lets a test act as a handler between staging and renaming, `afterEachCopy`
    /// after the copy of each request (by index).
    func deliver(_ requests: [Request], stoppingAfter lastStep: Step?, beforePlacing: (() -> Void)? = nil,
                 afterEachCopy: ((Int) -> Void)? = nil) -> [Outcome] {
        serial.withLock { _ in
            run(requests, stoppingAfter: lastStep ?? .removeSources, beforePlacing: beforePlacing, afterEachCopy: afterEachCopy)
        }
    }

    private func run(_ requests: [Request], stoppingAfter lastStep: Step, beforePlacing: (() -> Void)?,
                     afterEachCopy: ((Int) -> Void)?) -> [Outcome] {
        guard !requests.isEmpty else { return [] }
        let (outcomes, removal) = commitSteps(prepare(requests, stoppingAfter: lastStep, afterEachCopy: afterEachCopy),
                                              stoppingAfter: lastStep, beforePlacing: beforePlacing)
        if lastStep > .commit { removal.run() }
        return outcomes
    }

    private func prepare(_ requests: [Request], stoppingAfter lastStep: Step, afterEachCopy: ((Int) -> Void)? = nil) -> PreparedBatch {
        var batch = PreparedBatch(items: requests.map { request in
            Item(
                request: request,
                folderKey: FolderKey(root: request.containerPath, mailbox: SandboxName.sanitizedComponent(request.mailbox)),
                name: request.sandboxName)
        })
        copy(&batch.items, folders: &batch.folders, retired: &batch.retiredFolders, afterEachCopy: afterEachCopy)
        batch.timings.mark("copy")
        if lastStep > .copy { syncData(&batch.items) }
        batch.timings.mark("sync")
        return batch
    }

    /// Steps 0 and 3 to 5 (up to `lastStep`); step 6 is returned for the caller to run.
    private func commitSteps(_ batch: PreparedBatch, stoppingAfter lastStep: Step, beforePlacing: (() -> Void)?,
                             committed: (([Outcome]) -> Void)? = nil) -> (outcomes: [Outcome], removal: SourceRemoval) {
        var batch = batch
        defer { batch.closeFolders() }
        guard !batch.items.isEmpty else { return ([], SourceRemoval(batch: self, items: [], timings: batch.timings, started: batch.started)) }
        var items = batch.items
        var timings = batch.timings
        timings.mark("queued")
        findEarlierDeliveries(&items)
        timings.mark("lookup")
        if lastStep > .sync { stage(&items, timings: &timings) }
        timings.mark("stage")
        if lastStep > .stage {
            beforePlacing?()
            place(&items, timings: &timings)
        }
        timings.mark("syncFolders")
        if lastStep > .place { commit(&items) }
        timings.mark("commit")
        let outcomes = items.map { item -> Outcome in
            if let earlier = item.earlier {
                return .alreadyDelivered(earlier)
            }
            if let record = item.record, record.state == .committed, item.isAlive {
                return .committed(record)
            }
            return .failed(item.error ?? DeliveryError(code: .io, message: "The batch stopped before this delivery was committed."))
        }
        committed?(outcomes)
        return (outcomes, SourceRemoval(batch: self, items: items, timings: timings, started: batch.started))
    }

    func fail(_ item: inout Item, _ error: any Error) {
        let error = DeliveryError.wrapping("deliver", error)
        item.error = error
        if let temporary = item.temporary, let folder = item.folder, !item.placed {
            writer.removeTemporary(temporary.name, in: folder)
        }
        logger.warning("delivery failed; the source stays in its inbox", metadata: [
            "source": "\(item.request.sourceFilePath.string)", "handler": "\(item.request.bundleIdentifier)",
            "code": "\(error.code.rawValue)", "error": "\(error.message)",
        ])
    }

    // MARK: (a) copy

    /// Step 0, run after the copy so that a batch prepared while the one before it committed
    /// still sees that commit: a source found delivered keeps no copy.
    private func findEarlierDeliveries(_ items: inout [Item]) {
        do {
            // Taken out of its inbox meanwhile (by the batch before, which delivered it and renamed
            // it aside or removed it, or by its dropper)? Only then may a delivery whose source is
            // marked removed be this very file (see deliveredRecords(forSources:isTakenOut:)).
            let earlier = try ledger.deliveredRecords(
                forSources: items.map { ($0.request.sourceStatus, $0.request.sourceFilePath) },
                isTakenOut: { !items[$0].request.isStillInItsInbox })
            for (index, record) in earlier {
                items[index].earlier = record
                if let temporary = items[index].temporary, let folder = items[index].folder {
                    writer.removeTemporary(temporary.name, in: folder)
                }
                items[index].temporary = nil
            }
        } catch {
            // Without the ledger nothing can be committed either; the copy step reports it.
            logger.warning("could not look up earlier deliveries", metadata: ["error": "\(error)"])
        }
    }

    private func copy(_ items: inout [Item], folders: inout [FolderKey: Result<SandboxWriter.Folder, DeliveryError>],
                      retired: inout [SandboxWriter.Folder], afterEachCopy: ((Int) -> Void)?) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: options.bufferSize, alignment: 4096)
        defer { buffer.deallocate() }
        var temporaryNames = SandboxWriter.TemporaryNames()
        // Copies made into each folder since it was last looked up from its container root.
        var copiesSinceCheck: [FolderKey: Int] = [:]
        for index in items.indices {
            let request = items[index].request
            let key = items[index].folderKey
            var folder: Result<SandboxWriter.Folder, DeliveryError>
            if let known = folders[key] {
                folder = known
                // The copies go to the folder found from the container root, looked up again
                // every ``Options/copiesBetweenFolderChecks`` copies (three system calls, once a
                // file before): a handler that moved its mailbox away meanwhile gets a new one,
                // and the moved folder nothing more. The copies already in it are turned back by
                // ``place(_:)``, which looks before its renames and after its sync, and their
                // sources delivered again.
                let since = copiesSinceCheck[key, default: 0] + 1
                copiesSinceCheck[key] = since % options.copiesBetweenFolderChecks
                if since == options.copiesBetweenFolderChecks, case .success(let open) = known, (try? writer.confirmInPlace(open)) == nil {
                    logger.warning("the mailbox folder was moved away during delivery; creating it again", metadata: [
                        "path": "\(open.path.string)", "handler": "\(request.bundleIdentifier)",
                    ])
                    retired.append(open)
                    folders[key] = nil
                }
            }
            if folders[key] == nil {
                folder = Result {
                    try writer.openFolder(root: key.root, components: ["Documents", "Inbox", key.mailbox], owner: request.copyOwner, create: true)
                }.mapError { DeliveryError.wrapping("open the mailbox folder", $0) }
                folders[key] = folder
            }
            folder = folders[key]!
            do {
                let opened = try folder.get()
                items[index].folder = opened
                let copy = {
                    try self.writer.copyToTemporary(
                        from: request.sourceDescriptor, expected: request.sourceStatus, describing: request.sourceFilePath.string,
                        into: opened, owner: request.copyOwner, buffer: buffer, names: &temporaryNames,
                        syncData: self.options.dataSync == .eachFile)
                }
                do {
                    items[index].temporary = try copy()
                } catch let error as DeliveryError where error.code == .noSpace && (reclaimer?.pending ?? 0) > 0 {
                    // A full disk frees the delivered sources waiting to be reclaimed first.
                    reclaimer?.reclaimAll()
                    items[index].temporary = try copy()
                }
            } catch {
                fail(&items[index], error)
            }
            afterEachCopy?(index)
        }
    }

    // MARK: (b) sync

    private func syncData(_ items: inout [Item]) {
        guard options.dataSync == .fileSystem else { return }
        var synced: [UInt64: DeliveryError?] = [:]
        // A large copy synced itself (SandboxWriter.syncsByItself(size:)): a batch of nothing else
        // makes no `syncfs`.
        for index in items.indices where items[index].isAlive && items[index].temporary?.isSynced != true {
            guard let folder = items[index].folder else { continue }
            let device = folder.status.device
            if synced[device] == nil {
                do {
                    try DeliveryError.performing("sync file system of", folder.path.string) { try folder.descriptor.syncFileSystem() }
                    synced[device] = .some(nil)
                } catch {
                    synced[device] = DeliveryError.wrapping("sync", error)
                }
            }
            if case .some(.some(let error)) = synced[device] { fail(&items[index], error) }
        }
    }

    // MARK: (c) stage

    private func stage(_ items: inout [Item], timings: inout BatchStepTimings) {
        var reserved: [FolderKey: Set<String>] = [:]
        var nextCounter: [NameKey: Int] = [:]
        var records: [LedgerRecord] = []
        let now = Date()
        for index in items.indices where items[index].isAlive {
            guard let folder = items[index].folder, let temporary = items[index].temporary else { continue }
            let request = items[index].request
            let key = items[index].folderKey
            let nameKey = NameKey(folder: key, name: items[index].name)
            do {
                let (finalName, counter) = try writer.firstFreeName(
                    items[index].name, in: folder, from: nextCounter[nameKey] ?? 0, excluding: reserved[key] ?? [])
                reserved[key, default: []].insert(finalName)
                nextCounter[nameKey] = counter + 1
                items[index].finalName = finalName
                items[index].counter = counter
                let originalName = items[index].name.original
                let record = LedgerRecord(
                    deliveryID: request.deliveryID,
                    bundleIdentifier: request.bundleIdentifier,
                    kind: .file,
                    mailbox: key.mailbox,
                    originalName: originalName,
                    extensionChain: items[index].name.extensionChain,
                    containerPath: key.root.string,
                    finalPath: folder.path(of: finalName).string,
                    finalDevice: temporary.device,
                    finalInode: temporary.inode,
                    temporaryPath: folder.path(of: temporary.name).string,
                    contentType: request.contentType,
                    size: temporary.size,
                    sha256: temporary.sha256,
                    sourceApplication: request.sourceApplication,
                    annotation: Self.annotation(mailbox: key.mailbox, originalFilename: originalName, size: temporary.size, extra: request.annotationJSON),
                    state: .staged,
                    sourcePath: request.keepSource ? nil : request.sourceFilePath,
                    sourceDevice: request.sourceStatus.device,
                    sourceInode: request.sourceStatus.inode,
                    sourceSize: request.sourceStatus.size,
                    sourceMtimeNs: request.sourceStatus.modificationTimeNanoseconds,
                    messageID: request.messageID,
                    partPath: request.partPath,
                    createdAt: now,
                    requesterUID: request.requesterUID,
                    seenAt: request.arrival.seenAt,
                    inbox: request.arrival.inbox,
                    mimeType: request.arrival.mimeType,
                    typedBy: request.arrival.typedBy,
                    routedBy: request.arrival.routedBy)
                items[index].record = record
                records.append(record)
            } catch {
                fail(&items[index], error)
            }
        }
        timings.mark("names")
        do {
            try ledger.stage(records)
        } catch {
            for index in items.indices where items[index].record != nil && items[index].isAlive {
                items[index].record = nil
                fail(&items[index], error)
            }
        }
    }

    // MARK: (d) place

    private func place(_ items: inout [Item], timings: inout BatchStepTimings) {
        var reserved: [FolderKey: Set<String>] = [:]
        for item in items where item.record != nil && item.isAlive {
            reserved[item.folderKey, default: []].insert(item.finalName)
        }
        var placedFolders: [FolderKey: [Int]] = [:]
        var folderOrder: [FolderKey] = []
        // Each folder is looked up from its container root before its first rename and again
        // after its sync (below), not before every rename: moved in between, it is caught by the
        // second look and every copy renamed in it is taken back, as one looked up before each
        // rename would have been. Keyed by the open folder itself: copies under one key may be in
        // a folder found moved during the copy step and in the one made anew after it.
        var checkedFolders: [FolderIdentity: Result<Void, any Error>] = [:]
        for index in items.indices where items[index].isAlive && items[index].record != nil {
            guard let folder = items[index].folder, let temporary = items[index].temporary else { continue }
            do {
                let identity = FolderIdentity(device: folder.status.device, inode: folder.status.inode)
                if checkedFolders[identity] == nil { checkedFolders[identity] = Result { try writer.confirmInPlace(folder) } }
                try checkedFolders[identity]!.get()
                while try !writer.place(temporary.name, as: items[index].finalName, in: folder) {
                    // Someone (the handler) took the name after it was chosen: the next free one,
                    // recorded before the rename so the row never names another file.
                    let (name, counter) = try writer.firstFreeName(
                        items[index].name, in: folder, from: items[index].counter + 1,
                        excluding: reserved[items[index].folderKey] ?? [])
                    reserved[items[index].folderKey, default: []].insert(name)
                    let finalPath = folder.path(of: name).string
                    try ledger.updateFinalPath(deliveryID: items[index].request.deliveryID, finalPath: finalPath)
                    items[index].finalName = name
                    items[index].counter = counter
                    items[index].record?.finalPath = finalPath
                }
                items[index].placed = true
                if placedFolders[items[index].folderKey] == nil { folderOrder.append(items[index].folderKey) }
                placedFolders[items[index].folderKey, default: []].append(index)
            } catch {
                fail(&items[index], error)
            }
        }
        timings.mark("place")
        for key in folderOrder {
            guard let indices = placedFolders[key], let folder = items[indices[0]].folder else { continue }
            do {
                try DeliveryError.performing("sync", folder.path.string) { try folder.descriptor.sync() }
                // Moved between the check before each rename and now: the names recorded would
                // point at nothing.
                try writer.confirmInPlace(folder)
            } catch {
                // The names may not survive a crash: take the copies back; the sources stay.
                for index in indices {
                    unplace(items[index])
                    items[index].placed = false
                    fail(&items[index], error)
                }
            }
        }
    }

    /// Removes a placed copy again, if the name still holds our copy.
    func unplace(_ item: Item) {
        guard let folder = item.folder, let temporary = item.temporary,
              let name = FilePath.Component(item.finalName) else { return }
        let path = folder.path(of: item.finalName).string
        if let found = try? folder.descriptor.status(of: name),
           found.device == temporary.device, found.inode == temporary.inode, found.size == temporary.size {
            _ = try? DeliveryError.performing("remove", path) { try folder.descriptor.unlink(name) }
        }
    }
}
