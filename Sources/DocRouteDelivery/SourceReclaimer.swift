import DocRouteLedger
import DocRoutePlatform
import Foundation
import Logging
import Synchronization
import SystemPackage

/// Takes delivered sources out of their inboxes at once and frees them later, off the hot path.
///
/// Freeing an inode in the middle of a burst makes every later new file on that file system
/// slower (ext4 skips recently freed inodes, one at a time, when it hands out the next one; see the
/// README's figures): half of a burst's cost was the sources' `unlink`. So a committed source is
/// renamed into `<state_directory>/reclaim/` instead, which is on the inbox's file system, owned
/// by the daemon and mode 0700 (no dropper can see or reach what waits there, and no scan or watch
/// looks there). Its inode is freed by ``reclaim(limit:)``: all at once when delivery is quiet, a
/// few at a time under sustained load, and everything first when a copy meets a full disk.
///
/// Crash safety: a name enters the folder only after its delivery was committed, so what is in it
/// is delivered, but for one moment: a file renamed aside is checked only after the rename (see
/// ``takeAside(_:in:expected:deliveryID:describing:)``), and a crash between the two can leave a
/// sender's new file there. ``open(stateDirectory:)`` settles the folder at the next start: each
/// file the ledger records as its delivery's source is freed, any other is put back in its inbox
/// (``settleLeftovers(in:path:)``). The ledger's note that
/// a source left its inbox is written here too, off the hot path, in this order for each chunk:
/// `syncfs` (the renames out of the inboxes are durable), the notes in one durable transaction,
/// then the unlinks. So a crash can never leave a note without its rename (the source would come
/// back and be delivered twice), and an inode is only freed, and so only reused by a new file,
/// once its note is durable (else the new file could pass for the delivered one). A source whose
/// inbox is on another file system than the state directory is removed at once, as before.
package final class SourceReclaimer: Sendable {
    /// The folder sources wait in, in the state directory.
    package static let folderName = "reclaim"

    struct Folder: Sendable {
        var descriptor: FileDescriptor
        var device: UInt64
        var path: FilePath
    }

    struct State: Sendable {
        var folder: Folder?
        /// The deliveries whose sources wait in the folder, each named by its delivery's id, not
        /// yet unlinked (any order will do). 16 bytes a source inline: a burst of 100,000 keeps
        /// 1.6 MiB here, where a name as a `FilePath.Component` (a heap string each) took six
        /// times that.
        var waiting: [UUID] = []
        /// Batches handed to delivery and not yet completed.
        var batchesInFlight = 0
        /// When delivery last started or finished a batch.
        var lastBatchActivity = ContinuousClock.now
    }

    let state = Mutex(State())
    /// Notes durably in the ledger that these deliveries' sources left their inboxes.
    let noteRemoved: @Sendable ([UUID]) throws -> Void
    /// The ledger's row of a delivery, by its id: what its source was (path, device, inode, size,
    /// modification time).
    let recordOf: @Sendable (UUID) throws -> LedgerRecord?
    let logger: Logger
    let wakeUp: AsyncStream<Void>.Continuation
    let wakeUps: AsyncStream<Void>

    /// Creates a reclaimer with no folder yet: until ``open(stateDirectory:)`` sources are removed at
    /// once. `noteRemoved` records durably that deliveries' sources left their inboxes; `recordOf`
    /// reads a delivery's row (without it, or without a row, what a previous run left is freed).
    package init(logger: Logger, noteRemoved: @escaping @Sendable ([UUID]) throws -> Void = { _ in },
                 recordOf: @escaping @Sendable (UUID) throws -> LedgerRecord? = { _ in nil }) {
        self.logger = logger
        self.noteRemoved = noteRemoved
        self.recordOf = recordOf
        (wakeUps, wakeUp) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    deinit {
        if let folder = state.withLock({ $0.folder }) { folder.descriptor.closeIgnoringErrors() }
    }

    /// Sources renamed aside and not yet freed.
    package var pending: Int { state.withLock { $0.waiting.count } }

    /// Creates (0700) and opens `<stateDirectory>/reclaim`, and settles what a previous run left
    /// there: delivered sources are freed, a file that is not its delivery's source goes back to
    /// its inbox. Returns how many it freed.
    @discardableResult
    package func open(stateDirectory: FilePath) throws -> Int {
        let parent = try DeliveryError.performing("open folder", stateDirectory.string) { try FileDescriptor.openDirectory(atPath: stateDirectory) }
        defer { parent.closeIgnoringErrors() }
        let name = FilePath.Component(Self.folderName)!
        let path = stateDirectory.appending(name)
        try DeliveryError.performing("create folder", path.string) { try parent.makeDirectory(name, permissions: 0o700) }
        let descriptor = try DeliveryError.performing("open", path.string) { try parent.open(name, .readOnly, options: [.directory]) }
        let status: FileStatus
        do {
            status = try DeliveryError.performing("inspect", path.string) { try descriptor.status() }
            guard status.userID == ProcessIdentity.effectiveUserID else {
                throw DeliveryError(code: .permissionDenied, message: "\(path.string) belongs to uid \(status.userID), not to docrouted (uid \(ProcessIdentity.effectiveUserID)). Remove it; docrouted creates it again.")
            }
            try DeliveryError.performing("change mode of", path.string) { try descriptor.changeMode(0o700) }
        } catch {
            descriptor.closeIgnoringErrors()
            throw error
        }
        let freed: Int
        do {
            freed = try settleLeftovers(in: descriptor, path: path)
        } catch {
            descriptor.closeIgnoringErrors()
            throw error
        }
        let previous = state.withLock { state in
            defer { state.folder = Folder(descriptor: descriptor, device: status.device, path: path) }
            return state.folder
        }
        if let previous { previous.descriptor.closeIgnoringErrors() }
        if freed > 0 {
            logger.info("freed delivered sources left from the previous run", metadata: ["folder": "\(path.string)", "count": "\(freed)"])
        }
        return freed
    }

    /// Whether a source on `device` would be renamed aside rather than removed at once.
    package func defers(device: UInt64) -> Bool {
        state.withLock { $0.folder?.device == device }
    }

    /// What ``takeAside(_:in:expected:deliveryID:describing:)`` did.
    enum TakenAside: Equatable {
        /// Renamed into the folder; the reclaimer notes it in the ledger and frees it later.
        case deferred
        /// Removed at once (another file system): the caller syncs the folder and notes it.
        case removed
        /// The name was gone already.
        case gone
        /// The name held another file by the time it was taken (a sender replaced it after the
        /// copy): that file was put back under its name, or beside it when the name was taken
        /// a third time, or left where it was when the delivery's source waits in the folder
        /// already (an earlier batch took it); it is delivered in its turn. The delivered one was
        /// gone already.
        case notOurs
    }

    /// Takes a delivered source out of its inbox: renamed into the folder when it is on the same
    /// file system, else removed.
    ///
    /// The name is moved first and what it held is checked after (`expected`: the same device,
    /// inode, size and modification time as the file copied). Checking first and then renaming
    /// would leave a moment in which a sender could rename a new file over the name, and that
    /// new file would be taken aside and freed unseen. A file that is not the delivered one is
    /// put back at once.
    func takeAside(_ name: FilePath.Component, in directory: FileDescriptor, expected: FileStatus, deliveryID: UUID,
                   describing: @autoclosure () -> String) throws -> TakenAside {
        let path = describing()
        guard let folder = state.withLock({ $0.folder }), folder.device == expected.device else {
            return try Self.removeWithinInbox(name, in: directory, expected: expected, deliveryID: deliveryID, describing: path, logger: logger)
        }
        // Named by its delivery (no fresh name to make, 16 bytes to keep): a delivery's source
        // leaves its inbox once, and what is in the folder never goes back to an inbox.
        let aside = Self.name(deliveryID)
        do {
            // Taken: an earlier batch took this delivery's source aside already (the file was
            // queued again while in flight), so what the name holds now is another file.
            guard try DeliveryError.performing("rename", path, { try directory.renameNoReplace(name, to: aside, in: folder.descriptor) }) else {
                return .notOurs
            }
        } catch let error as DeliveryError where error.errno == .noSuchFileOrDirectory {
            return .gone
        } catch let error as DeliveryError where error.errno == .improperLink {
            // A mailbox folder mounted from another file system.
            return try Self.removeWithinInbox(name, in: directory, expected: expected, deliveryID: deliveryID, describing: path, logger: logger)
        }
        guard Self.holds(expected, aside, in: folder.descriptor) else {
            try Self.putBack(aside, from: folder.descriptor, as: name, in: directory, describing: path, logger: logger)
            return .notOurs
        }
        state.withLock { $0.waiting.append(deliveryID) }
        wakeUp.yield()
        return .deferred
    }

    /// Removes a delivered source at once (no reclaim folder on its file system): renamed first to
    /// a name in the inbox that intake passes over (a leading dot), checked, then removed; a file
    /// that is not the delivered one is put back (see ``takeAside(_:in:expected:deliveryID:describing:)``).
    /// The name is the delivery's (``removingName(_:)``), so that recovery finds what a crash left
    /// under it and settles it by the delivery's row.
    static func removeWithinInbox(_ name: FilePath.Component, in directory: FileDescriptor, expected: FileStatus,
                                  deliveryID: UUID, describing path: String, logger: Logger) throws -> TakenAside {
        let aside = removingName(deliveryID)
        do {
            guard try DeliveryError.performing("rename", path, { try directory.renameNoReplace(name, to: aside, in: directory) }) else {
                throw DeliveryError(code: .nameExhausted, message: "\(path): the inbox holds \(aside.string) already")
            }
        } catch let error as DeliveryError where error.errno == .noSuchFileOrDirectory {
            return .gone
        }
        guard holds(expected, aside, in: directory) else {
            try putBack(aside, from: directory, as: name, in: directory, describing: path, logger: logger)
            return .notOurs
        }
        try DeliveryError.performing("remove", path) { _ = try directory.unlink(aside) }
        return .removed
    }

    /// Whether `name` in `folder` is the file `expected` describes: the same device, inode, size
    /// and modification time.
    static func holds(_ expected: FileStatus, _ name: FilePath.Component, in folder: FileDescriptor) -> Bool {
        guard let found = try? folder.status(of: name) else { return false }
        return found.isSameFile(as: expected) && found.size == expected.size
            && found.modificationTimeNanoseconds == expected.modificationTimeNanoseconds
    }

    /// Puts a file taken aside by mistake back under its name, or beside it under a new name
    /// when another file took the name meanwhile: never over a file, never lost.
    static func putBack(_ aside: FilePath.Component, from folder: FileDescriptor, as name: FilePath.Component,
                        in directory: FileDescriptor, describing path: String, logger: Logger) throws {
        if try DeliveryError.performing("rename back", path, { try folder.renameNoReplace(aside, to: name, in: directory) }) { return }
        let kept = FilePath.Component("\(name.stem)-kept-\(UUID.random().uuidString.prefix(8))\(name.extension.map { "." + $0 } ?? "")")!
        _ = try DeliveryError.performing("rename back", path) { try folder.renameNoReplace(aside, to: kept, in: directory) }
        logger.warning("a file that replaced a delivered source under its name was put back beside it, its own name being taken a third time", metadata: [
            "path": "\(path)", "kept-as": "\(kept.string)",
        ])
    }

    /// Frees up to `limit` waiting sources (their renames synced and their notes written first);
    /// returns how many were freed.
    @discardableResult
    package func reclaim(limit: Int) -> Int {
        let (folder, entries): (Folder?, [UUID]) = state.withLock { state in
            let count = min(limit, state.waiting.count)
            let entries = Array(state.waiting.suffix(count))
            state.waiting.removeLast(count)
            return (state.folder, entries)
        }
        guard let folder, !entries.isEmpty else { return 0 }
        do {
            try DeliveryError.performing("sync file system of", folder.path.string) { try folder.descriptor.syncFileSystem() }
            try noteRemoved(entries)
        } catch {
            // Nothing is freed before its note is durable: put them back, try again later.
            state.withLock { $0.waiting.append(contentsOf: entries) }
            logger.warning("could not note delivered sources as removed; they are freed later", metadata: ["error": "\(error)"])
            return 0
        }
        var freed = 0
        for deliveryID in entries {
            let name = Self.name(deliveryID)
            do {
                try DeliveryError.performing("remove", folder.path.appending(name).string) { try folder.descriptor.unlink(name) }
                freed += 1
            } catch {
                // Left in the folder: the next start frees it.
                logger.warning("could not free a delivered source; it is freed at the next start", metadata: [
                    "path": "\(folder.path.appending(name).string)", "error": "\(error)", "delivery-id": "\(deliveryID.protocolText)",
                ])
            }
        }
        return freed
    }

    /// A source's name in the folder: its delivery's id.
    static func name(_ deliveryID: UUID) -> FilePath.Component { FilePath.Component(deliveryID.ledgerText)! }

    /// The hidden name in its inbox a delivery's source has while it is checked and removed there.
    static func removingName(_ deliveryID: UUID) -> FilePath.Component {
        FilePath.Component(".docroute-removing-\(deliveryID.ledgerText)")!
    }

    /// Frees everything waiting (a copy met a full disk). Returns how many were freed.
    @discardableResult
    package func reclaimAll() -> Int {
        var freed = 0
        while pending > 0 {
            let chunk = reclaim(limit: 4096)
            if chunk == 0 { break }  // the notes cannot be written now: stop rather than spin
            freed += chunk
        }
        if freed > 0 { logger.notice("disk full: freed delivered sources waiting to be reclaimed", metadata: ["count": "\(freed)"]) }
        return freed
    }

    /// Delivery took a batch.
    func batchStarted() {
        state.withLock { state in
            state.batchesInFlight += 1
            state.lastBatchActivity = .now
        }
    }

    /// Delivery finished a batch.
    func batchFinished() {
        state.withLock { state in
            state.batchesInFlight -= 1
            state.lastBatchActivity = .now
        }
        wakeUp.yield()
    }

    /// How reclamation paces itself.
    package struct Pace: Sendable {
        /// Delivery counts as quiet once no batch was in hand for this long.
        package var quietAfter: Duration = .milliseconds(250)
        /// Sources freed at a time.
        package var chunk = 1024
        /// Under load: sources freed per ``loadedInterval``.
        package var loadedChunk = 32
        /// Under load: the pause between chunks (with ``loadedChunk``, about 320 a second).
        package var loadedInterval: Duration = .milliseconds(100)
        /// Past this many waiting, they are freed at full speed even under load.
        package var highWater = 262_144
        /// After a chunk that freed nothing (its ledger note could not be written), the pause.
        package var retryInterval: Duration = .seconds(5)

        package init() {}
    }

    /// Frees waiting sources until cancelled, calling `blocking` to run the unlinks off the
    /// cooperative pool, and `report` with the count waiting whenever it changed. Sleeps on a
    /// stream (no timer) while nothing waits.
    package func run(
        pace: Pace = Pace(),
        report: @Sendable (Int) -> Void = { _ in },
        blocking: @Sendable (@escaping @Sendable () -> Int) async -> Int
    ) async {
        var wakeUps = self.wakeUps.makeAsyncIterator()
        var reported = 0
        while !Task.isCancelled {
            let (waiting, quiet) = state.withLock { state in
                (state.waiting.count, state.batchesInFlight == 0 && ContinuousClock.now - state.lastBatchActivity >= pace.quietAfter)
            }
            if waiting != reported {
                report(waiting)
                reported = waiting
            }
            if waiting == 0 {
                guard await wakeUps.next() != nil else { return }
                continue
            }
            let fast = quiet || waiting > pace.highWater
            let freed = await blocking { [self] in reclaim(limit: fast ? pace.chunk : pace.loadedChunk) }
            if freed == 0 {
                // The ledger note or the unlinks failed (logged): try again later, not in a loop.
                try? await Task.sleep(for: pace.retryInterval)
            } else if !fast {
                try? await Task.sleep(for: pace.loadedInterval)
            }
        }
    }
}
