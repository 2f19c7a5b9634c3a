import DocRouteConfiguration
import DocRouteIntake
import DocRouteLedger
import DocRoutePlatform
import DocRouteProtocol
import Foundation
import Logging
import NIOPosix
import Synchronization
import SystemPackage

/// The daemon's ``DeliveryBackend``: the ledger (through its seam, ``Ledger``), group-committed
/// sandbox copies and the quarantine, with their blocking system calls run on a thread pool, off
/// the async executors.
package final class LedgerBackend: DeliveryBackend, DeliveryStore {
    let configuration: DaemonConfiguration
    /// The ledger, known only by its protocols: the SQLite one (``DeliveryLedger``) is opened by
    /// ``openLedger(_:logger:)``, the one place that names an implementation.
    let ledger: any Ledger
    let batch: DeliveryBatch
    let quarantineFolder: Quarantine
    /// Frees delivered sources off the hot path (see ``SourceReclaimer``).
    package let reclaimer: SourceReclaimer
    /// Runs the committing half of delivery batches, packages, recovery and quarantine moves:
    /// long, mostly waiting on disk flushes, one after the other.
    let pool: NIOThreadPool
    /// Runs the copying half of delivery batches, so that the next batch is copied while the
    /// previous one waits on its flushes (see ``DeliveryBatch/prepare(_:)``).
    let copyPool: NIOThreadPool
    /// Runs the unlinks of ``reclaimer``, so freeing sources never holds up a batch.
    let reclaimPool: NIOThreadPool
    /// Takes committed batches' sources out of their inboxes (``SourceRemoval``), one batch after
    /// the other in commit order, while ``pool`` commits the next batch: that step was a sixth of
    /// the committing thread's time, which is what holds a burst's rate.
    let sourcePool: NIOThreadPool
    let logger: Logger
    /// Package sources that stopped the daemon before (see ``PoisonMarkLedger``), by path:
    /// the intake quarantines them instead of touching them again.
    let poisonedPackages = Mutex<[String: PoisonMark]>([:])

    /// Opens the configured ledger (``openLedger(_:logger:)``) and delivers through it.
    package convenience init(configuration: DaemonConfiguration, logger: Logger) throws {
        try self.init(configuration: configuration, ledger: Self.openLedger(configuration, logger: logger), logger: logger)
    }

    /// Delivers through `ledger`, any implementation of the seam.
    package init(configuration: DaemonConfiguration, ledger: any Ledger, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        self.ledger = ledger
        reclaimer = SourceReclaimer(logger: logger, noteRemoved: { [ledger] ids in try ledger.markSourcesRemoved(ids, at: Date(), durably: true) },
                                    recordOf: { [ledger] id in try ledger.record(deliveryID: id) })
        batch = DeliveryBatch(ledger: ledger, folderMode: HandlerAccount.sandboxFolderMode,
                              accessUserID: HandlerAccount.sandboxAccessUserID, reclaimer: reclaimer, logger: logger)
        quarantineFolder = Quarantine(directory: FilePath(configuration.quarantineDirectory), logger: logger)
        pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        copyPool = NIOThreadPool(numberOfThreads: 1)
        copyPool.start()
        reclaimPool = NIOThreadPool(numberOfThreads: 1)
        reclaimPool.start()
        sourcePool = NIOThreadPool(numberOfThreads: 1)
        sourcePool.start()
    }

    /// The ledger the configuration asks for: the SQLite one in the state directory.
    package static func openLedger(_ configuration: DaemonConfiguration, logger: Logger) throws -> any Ledger {
        try DeliveryLedger(stateDirectory: FilePath(configuration.stateDirectory),
                           directoryMode: stateDirectoryMode(configuration), logger: logger)
    }

    /// The mode a state directory docrouted creates gets: 0700, or 0711 when handlers' containers
    /// are below it (they must pass through it to reach their own).
    package static func stateDirectoryMode(_ configuration: DaemonConfiguration) -> CModeT {
        configuration.containersDirectory.hasPrefix(configuration.stateDirectory + "/") ? 0o711 : 0o700
    }

    /// Watches the ledger file while the daemon runs (see ``LedgerWatch``): `problem` is called
    /// once if it is removed, replaced or found damaged.
    package func watchLedger(problem: @escaping @Sendable (DeliveryError) -> Void) throws -> any LedgerWatching {
        try ledger.watch(logger: logger, problem: problem)
    }

    /// Closes the ledger at a clean stop: SQLite checkpoints it into `ledger.sqlite` and removes
    /// the `-wal`, so the next start (and a backup of the state directory) finds one file.
    package func close() {
        do {
            try ledger.close()
        } catch {
            logger.warning("the ledger was not closed cleanly; SQLite replays its -wal at the next start: \(error)")
        }
    }

    deinit {
        copyPool.shutdownGracefully { _ in }
        pool.shutdownGracefully { _ in }
        reclaimPool.shutdownGracefully { _ in }
        sourcePool.shutdownGracefully { _ in }
    }

    func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await pool.runIfActive(body)
    }

    /// Copies a batch on ``copyPool``, then commits it on ``pool``, and fulfils `ticket` as soon
    /// as it is committed; ``sourcePool`` then takes the sources out of their inboxes while the
    /// next batch commits. The pools have one thread each and take work in order, so batches
    /// commit, and their sources leave, in the order they were submitted.
    func deliver(_ requests: [DeliveryBatch.Request], fulfilling ticket: @escaping @Sendable ([DocumentDeliveryOutcome]) -> Void) {
        let stopped: @Sendable (Int) -> Void = { count in
            ticket(Array(repeating: .failed(DeliveryError(code: .io, message: "the delivery worker is stopped; the source stays in its inbox")), count: count))
        }
        reclaimer.batchStarted()
        copyPool.submit { [batch, pool, sourcePool, reclaimer] state in
            guard case .active = state else {
                reclaimer.batchFinished()
                return stopped(requests.count)
            }
            let prepared = batch.prepare(requests)
            pool.submit { state in
                guard case .active = state else {
                    reclaimer.batchFinished()
                    _ = batch.abandon(prepared)
                    return stopped(requests.count)
                }
                let removal = batch.complete(prepared) { outcomes in ticket(outcomes.map(DocumentDeliveryOutcome.init)) }
                sourcePool.submit { state in
                    defer { reclaimer.batchFinished() }
                    // Stopped first: the sources stay, and the next start's recovery takes them out.
                    guard case .active = state else { return }
                    removal.run()
                }
            }
        }
    }

    package func settle() async {
        // A batch reaches `pool` only from `copyPool`, its removal `sourcePool` only from `pool`:
        // wait for each in that order.
        _ = try? await copyPool.runIfActive {}
        _ = try? await blocking {}
        _ = try? await sourcePool.runIfActive {}
    }

    package func recover() async throws {
        let containers = configuration.containersDirectory
        _ = try await blocking { [batch] in
            let roots = ((try? FileManager.default.contentsOfDirectory(atPath: containers)) ?? []).map { FilePath(containers + "/" + $0) }
            return try batch.recover(containerRoots: roots).committed.count
        }
        let state = FilePath(configuration.stateDirectory)
        try await blocking { [reclaimer] in _ = try reclaimer.open(stateDirectory: state) }
        for inbox in configuration.inboxes where inbox.kind == .directory {
            if let status = try? FilePath(inbox.path).status(followingSymbolicLinks: true), !reclaimer.defers(device: status.device) {
                logger.notice("this inbox is on another file system than the state directory: its delivered sources are removed at once, not reclaimed later", metadata: [
                    "inbox": "\(inbox.path)", "stateDirectory": "\(configuration.stateDirectory)",
                ])
            }
        }
        _ = quarantineFolder.removeTemporaries()
        await settlePoisonMarks()
    }

    package func runReclamation(reporting report: @escaping @Sendable (Int) -> Void) async {
        await reclaimer.run(report: report) { [reclaimPool] work in
            (try? await reclaimPool.runIfActive(work)) ?? 0
        }
    }

    package var sourcesToReclaim: Int { reclaimer.pending }

    package func submit(_ documents: [DocumentDelivery]) -> DeliveryTicket {
        // Each document takes its place in what its handler (and its requester) may be owed
        // before anything is copied; one over a limit fails at once, retryable, and its source
        // stays where it is (an inbox's file is tried again later).
        var reservations: [PendingTally.Reservation] = []
        var refusals: [Int: DeliveryError] = [:]
        var admitted: [DocumentDelivery] = []
        for (index, document) in documents.enumerated() {
            switch reserve(bundleIdentifier: document.bundleIdentifier, userID: document.requesterUID, bytes: document.source.size) {
            case .success(let reservation):
                reservations.append(reservation)
                admitted.append(document)
            case .failure(let error):
                refusals[index] = error
            }
        }
        let ticket = DeliveryTicket()
        let pending = ledger.pendingTally
        let count = documents.count
        let finish: @Sendable ([DocumentDeliveryOutcome]) -> Void = { [reservations, refusals] outcomes in
            // The one place a submitted document's source descriptor is closed (see
            // ``DeliveryBackend/submit(_:)``): every outcome, a refusal's too, is known here, and
            // neither the batch nor intake touches the descriptor after this.
            for document in documents { document.source.closeDescriptor() }
            // Committed deliveries are counted by the ledger now: their places go back.
            for reservation in reservations { pending.release(reservation) }
            guard !refusals.isEmpty else { return ticket.fulfil(outcomes) }
            var delivered = outcomes.makeIterator()
            ticket.fulfil((0..<count).map { index in
                if let refusal = refusals[index] { return .failed(refusal) }
                return delivered.next() ?? .failed(DeliveryError(code: .io, message: "the batch ended without this document; it stays where it is"))
            })
        }
        if admitted.isEmpty {
            finish([])
        } else {
            submitAdmitted(admitted, fulfilling: finish)
        }
        return ticket
    }

    /// Takes a place for one delivery in what its handler, and the uid that asked for it, may be
    /// owed (``PendingTally``), or says which limit it is over.
    func reserve(bundleIdentifier: String, userID: UInt32?, bytes: Int64) -> Result<PendingTally.Reservation, DeliveryError> {
        ledger.pendingTally.reserve(bundleIdentifier: bundleIdentifier, userID: userID, bytes: bytes, limits: pendingLimits)
            .mapError { refusal in
                DeliveryError(code: .overLimit, message: "\(refusal). \(DeliveryError.advice(for: .overLimit))")
            }
    }

    /// The documents of ``submit(_:)`` that have their places, as one batch.
    private func submitAdmitted(_ documents: [DocumentDelivery], fulfilling finish: @escaping @Sendable ([DocumentDeliveryOutcome]) -> Void) {
        prepareContainers(documents)
        // The batch takes intake's documents as they are (``DeliveryBatch/Request``).
        deliver(documents, fulfilling: finish)
    }

    /// Creates default sandboxes (`<containers_directory>/<bundle id>`) on first use, owned by the
    /// handler. A container named by a manifest's DocRouteContainer must exist already.
    func prepareContainers(_ documents: [DocumentDelivery]) {
        var seen: Set<String> = []
        for document in documents where seen.insert(document.containerRoot).inserted {
            prepareContainer(document.containerRoot, owner: document.owner)
        }
    }

    func prepareContainer(_ root: String, owner: (uid: UInt32, gid: UInt32)?) {
        let prefix = configuration.containersDirectory + "/"
        guard root.hasPrefix(prefix), !FileManager.default.fileExists(atPath: root) else { return }
        let name = String(root.dropFirst(prefix.count))
        do {
            // Made like a mailbox folder: 0700, the handler's, docrouted's ACL entry when not root.
            let folder = try batch.writer.openFolder(
                root: FilePath(configuration.containersDirectory), components: [name],
                owner: owner.map { SandboxWriter.Owner(userID: $0.uid, groupID: $0.gid) }, create: true)
            folder.close()
        } catch {
            logger.error("sandbox cannot be created: \(error)", metadata: ["path": "\(root)"])
        }
    }

    package func deliveredParts(messageID: String, mailbox: String) async throws -> Set<String> {
        try await ledger.deliveredParts(ofMessage: messageID, mailbox: mailbox)
    }

    /// Records a custom-scheme URL for its handler, unless the handler (or `requesterUID`, when
    /// given) is owed as much as it may be: then ``DeliveryErrorCode/overLimit`` is thrown.
    package func recordURL(_ url: String, bundleIdentifier: String, sourceApplication: String?,
                           requesterUID: UInt32? = nil) async throws -> (deliveryID: String, sequence: Int64) {
        let reservation = try reserve(bundleIdentifier: bundleIdentifier, userID: requesterUID, bytes: Int64(url.utf8.count)).get()
        defer { ledger.pendingTally.release(reservation) }
        let record = try await ledger.recordURLDelivery(url, bundleIdentifier: bundleIdentifier, sourceApplication: sourceApplication,
                                                        requesterUID: requesterUID, at: Date())
        return (record.deliveryID.protocolText, record.sequence)
    }

    /// What a handler and a requester may be owed, from the configuration; uid 0's requests are
    /// counted only with `limit_root` (the caller leaves a requester out when it is not limited).
    var pendingLimits: PendingTally.Limits {
        PendingTally.Limits(
            perHandler: PendingTally.Amount(count: configuration.maxPendingPerHandler, bytes: configuration.maxPendingBytesPerHandler),
            perUser: PendingTally.Amount(count: configuration.maxPendingPerUID, bytes: configuration.maxPendingBytesPerUID))
    }

    /// Bytes the ledger takes on disk (its file and write-ahead log), for status and metrics.
    package var ledgerBytesOnDisk: Int64 { ledger.bytesOnDisk() }

    package func quarantine(name: [UInt8], in folder: Int32, mailbox: String, reason: String, origin: String) async throws {
        let quarantine = quarantineFolder
        let directory = configuration.quarantineDirectory
        try await blocking {
            try QuarantineEntry.move(name: name, in: folder, to: directory, mailbox: mailbox, reason: reason, origin: origin, quarantine: quarantine)
        }
        let note = UndeliveredDocument(outcome: .quarantined, inbox: Self.folder(of: origin), sourcePath: origin,
                                       originalName: InboxNames.display(name), mailbox: mailbox, reason: reason)
        do {
            try await ledger.noteUndelivered([note])
        } catch {
            // The file is in the quarantine with its reason file; only its history lacks it.
            logger.warning("the quarantined file's history could not be written: \(error)", metadata: ["path": "\(origin)"])
        }
    }

    /// Notes a mail part no handler took in the history (the message keeps it).
    package func noteSkipped(_ part: SkippedPart) async {
        let note = UndeliveredDocument(outcome: .skipped, inbox: part.messagePath, sourcePath: part.messagePath,
                                       originalName: part.fileName, mailbox: part.mailbox, size: part.size,
                                       contentType: part.contentType, reason: part.reason, messageID: part.messageID, partPath: part.partPath)
        do {
            try await ledger.noteUndelivered([note])
        } catch {
            logger.warning("the skipped attachment's history could not be written: \(error)", metadata: ["path": "\(part.messagePath)"])
        }
    }

    /// Documents' histories (``HistoryLedger/history(_:)``), for `docroutectl history` and the
    /// socket's `history` request.
    package func history(_ query: HistoryQuery) async throws -> [DocumentHistory] {
        try await ledger.history(query)
    }

    /// Prunes the history older than `days()` now, then every hour, until cancelled: in chunks of
    /// a thousand rows, so the ledger's writer is never held for long. `days` is asked each time,
    /// so a reload that changes it is taken at the next hour.
    package func runHistoryPruning(days: @escaping @Sendable () -> Double) async {
        while !Task.isCancelled {
            let days = days()
            let cutoff = Date().addingTimeInterval(-days * 86_400)
            var removed = 0
            while !Task.isCancelled {
                guard let count = try? await ledger.pruneHistory(before: cutoff, limit: 1_000) else { break }
                removed += count
                if count < 1_000 { break }
            }
            if removed > 0 {
                logger.info("history pruned", metadata: ["documents": "\(removed)", "history_days": "\(days)"])
            }
            try? await Task.sleep(for: .seconds(3_600))
        }
    }

    package func owed(bundleIdentifier: String, afterSequence sequence: Int64, limit: Int) async throws -> [OwedDelivery] {
        try await ledger.owed(bundleIdentifier: bundleIdentifier, afterSequence: sequence, limit: limit)
    }

    package func owedCount(bundleIdentifier: String) async throws -> Int {
        try await ledger.owedCount(bundleIdentifier: bundleIdentifier)
    }

    package func acknowledge(_ acknowledgements: [DeliveryAcknowledgement], notices: [DeliveryNotice]) async throws {
        try await ledger.acknowledge(acknowledgements, notices: notices)
    }

    package func ledgerStatistics() async -> LedgerStatistics? {
        try? await ledger.statistics()
    }

    /// The folder of `path` (an inbox file's inbox).
    static func folder(of path: String) -> String? {
        guard let slash = path.lastIndex(of: "/") else { return nil }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

}
