import DocRouteFleet
import DocRouteIntake
import DocRouteLedger
import DocRoutePlatform
import Foundation
import Logging
import Synchronization
import SystemPackage

/// The ``DeliveryBackend`` of a host in a fleet (`[fleet]`): an inbox's files go to the fleet's
/// PostgreSQL database instead of a sandbox of this host, to be copied by whichever host has their
/// handler subscribed (``FleetDispatcher``).
///
/// For a batch of inbox files:
/// 1. each source's identity (this host, device, inode, size, modification time, path) is looked
///    up among the sources committed before: one a crash left in its inbox after its commit is
///    removed, not committed a second time (``DocumentDeliveryOutcome/alreadyDelivered(deliveryID:)``);
/// 2. the others are committed with their bytes in one transaction, each under the delivery id
///    intake gave it: for small documents the look-up and the commit are one statement
///    (``FleetQueue/commitInOneStatement(_:lookingUp:)``), for larger ones a look-up
///    (``FleetQueue/committedSources(_:)``) and then a transaction that streams their bytes
///    (``FleetQueue/enqueue(_:)``);
/// 3. only then are the sources taken out of their inboxes, as the local delivery does
///    (``SourceReclaimer``: renamed aside and freed after a `syncfs`, or removed and the inbox
///    folder synced).
///
/// PostgreSQL not answering fails the batch as a retryable ``DeliveryError`` (`ledger`): the
/// sources stay in their inboxes and intake tries them again with its backoff, as after a full
/// disk. Packages, mail parts, quarantine, `open` of a client's file and custom-URL deliveries
/// stay on this host: they go to the ``LedgerBackend`` as without a fleet.
///
/// Batches are committed, and their sources removed, in the order they were submitted: each waits
/// for the one before, and those that waited together are committed together.
package final class FleetIntakeBackend: DeliveryBackend {
    /// This host's own delivery, for everything that stays local and for the sources' removal.
    package let local: LedgerBackend
    let queue: FleetQueue
    /// The history's events (``recordFreed(_:at:)``), gathered and written on a connection whose
    /// commits do not wait for PostgreSQL's disk: they are not what a source's removal rests on,
    /// and a batch's commit does not queue behind them.
    let history: FleetHistoryWriter
    /// This host's name in the fleet: part of each source's identity.
    let hostName: String
    /// Where the database is, for messages (it holds no password).
    let databaseAddress: String
    let logger: Logger
    /// The batches handed over and not yet committed.
    let queued = Mutex(Queued())
    /// Whether the last batch found PostgreSQL unreachable: said once when it starts, once when it ends.
    let unreachable = Mutex(false)

    package init(local: LedgerBackend, queue: FleetQueue, history: FleetHistoryWriter, hostName: String, databaseAddress: String, logger: Logger) {
        self.local = local
        self.queue = queue
        self.history = history
        self.hostName = hostName
        self.databaseAddress = databaseAddress
        self.logger = logger
    }

    /// Whether a document goes to the fleet: an inbox's plain file. A mail part (its source a
    /// scratch file) and a client's own file (`open`, kept where it is) stay local.
    static func goesToFleet(_ document: DocumentDelivery) -> Bool {
        document.sourceFolder != nil && document.messageID == nil
    }

    package func submit(_ batch: [DocumentDelivery]) -> DeliveryTicket {
        let fleetIndices = batch.indices.filter { Self.goesToFleet(batch[$0]) }
        guard !fleetIndices.isEmpty else { return local.submit(batch) }
        let localIndices = batch.indices.filter { !Self.goesToFleet(batch[$0]) }
        let submitted = Submitted(count: batch.count, fleetIndices: fleetIndices, documents: fleetIndices.map { batch[$0] },
                                  localIndices: localIndices,
                                  localTicket: localIndices.isEmpty ? nil : local.submit(localIndices.map { batch[$0] }))
        queued.withLock { state in
            state.waiting.append(submitted)
            // The worker takes the lock itself once it runs; it clears `worker` under the lock
            // when it finds nothing waiting, so a batch appended here is never left behind.
            if state.worker == nil { state.worker = Task { [self] in await commitWhatWaits() } }
        }
        return submitted.ticket
    }

    /// A batch handed over, its ticket, and where its fleet and local documents stand in it.
    struct Submitted: Sendable {
        let count: Int
        let fleetIndices: [Int]
        let documents: [DocumentDelivery]
        let localIndices: [Int]
        let localTicket: DeliveryTicket?
        let ticket = DeliveryTicket()
    }

    /// The batches waiting for the database, and the task committing them while there are any.
    struct Queued: Sendable {
        var waiting: [Submitted] = []
        var worker: Task<Void, Never>?
    }

    /// The most documents of several waiting batches committed together.
    static let documentsPerCommit = 1024

    /// Commits what waits until nothing does: every batch that came while the one before was
    /// being committed goes in one commit (one statement and one WAL flush for documents of one
    /// chunk), in the order they came. Submitting a batch does not wait for the one before, so
    /// under a steady trickle each would otherwise pay its own round trip and flush, one behind
    /// the other, and the wait grows with the queue.
    func commitWhatWaits() async {
        while true {
            let round = queued.withLock { state -> [Submitted] in
                var taken: [Submitted] = []
                var documents = 0
                while let next = state.waiting.first, taken.isEmpty || documents + next.documents.count <= Self.documentsPerCommit {
                    taken.append(state.waiting.removeFirst())
                    documents += next.documents.count
                }
                if taken.isEmpty { state.worker = nil }
                return taken
            }
            guard !round.isEmpty else { return }
            let committed = await commit(round.flatMap(\.documents))
            // The one place a fleet document's source descriptor is closed (see
            // ``DeliveryBackend/submit(_:)``): its outcome is known, nothing reads it after this.
            for batch in round { for document in batch.documents { document.source.closeDescriptor() } }
            var position = 0
            for batch in round {
                let localOutcomes = await batch.localTicket?.outcomes ?? []
                var outcomes = [DocumentDeliveryOutcome](repeating: .failed(DeliveryError(code: .io, message: "the batch ended without this document; it stays where it is")), count: batch.count)
                for index in batch.fleetIndices {
                    outcomes[index] = committed.outcomes[position]
                    position += 1
                }
                for (place, index) in batch.localIndices.enumerated() where place < localOutcomes.count { outcomes[index] = localOutcomes[place] }
                batch.ticket.fulfil(outcomes)
            }
            await removeSources(committed.taken)
        }
    }

    /// What a batch's commit did: one outcome per document, and the sources to take out of their
    /// inboxes (committed now or before), with their delivery ids.
    struct Committed {
        var outcomes: [DocumentDeliveryOutcome]
        var taken: [(document: DocumentDelivery, deliveryID: UUID)]
    }

    /// Steps 1 and 2: the sources committed before are found, the others committed. A batch of
    /// small documents (``FleetQueue/fitsOneStatement(_:)``, every batch of a steady trickle) does
    /// both in one statement; a larger one looks up first and then streams its bytes in a
    /// transaction.
    func commit(_ documents: [DocumentDelivery]) async -> Committed {
        let identities = documents.map { identity(of: $0) }
        // What is wrong with a document before the database is asked: the same file twice in one
        // batch (queued again while in flight: once is enough, the second finds the first
        // committed next time if it is still there), or a source written to since intake opened it
        // (taken once it is quiet, as locally). A source committed before goes all the same.
        var problems = [DeliveryError?](repeating: nil, count: documents.count)
        var seen: Set<String> = []
        var candidates: [Int] = []
        for (index, document) in documents.enumerated() {
            if !seen.insert(identities[index]).inserted {
                problems[index] = DeliveryError(code: .changed, message: "\(document.sourcePath) is in this batch twice; it is looked at again")
            } else if let problem = changed(document) {
                problems[index] = problem
            } else {
                candidates.append(index)
            }
        }
        let fresh = candidates.map { fleetDocument(documents[$0], identity: identities[$0]) }
        let earlier: [String: UUID]
        let committed: Set<UUID>
        do {
            if FleetQueue.fitsOneStatement(fresh) {
                let answer = try await queue.commitInOneStatement(fresh, lookingUp: identities)
                earlier = answer.earlier
                committed = answer.committed
            } else {
                earlier = try await queue.committedSources(identities)
                let unseen = fresh.filter { earlier[$0.sourceIdentity] == nil }
                try await queue.enqueue(unseen)
                committed = Set(unseen.map(\.deliveryID))
            }
        } catch {
            return failed(documents, error)
        }
        if unreachable.withLock({ state in defer { state = false }; return state }) {
            logger.notice("fleet: PostgreSQL takes documents again; the files that waited in their inboxes go now", metadata: ["database": "\(databaseAddress)"])
        }
        var outcomes: [DocumentDeliveryOutcome] = []
        var taken: [(document: DocumentDelivery, deliveryID: UUID)] = []
        for (index, document) in documents.enumerated() {
            if let deliveryID = earlier[identities[index]] {
                outcomes.append(.alreadyDelivered(deliveryID: deliveryID.protocolText))
                taken.append((document, deliveryID))
            } else if let problem = problems[index] {
                outcomes.append(.failed(problem))
            } else if committed.contains(document.deliveryID) {
                outcomes.append(.committed(deliveryID: document.deliveryID.protocolText, finalPath: "fleet:" + document.deliveryID.protocolText,
                                           sequence: 0, size: document.sourceStatus.size))
                taken.append((document, document.deliveryID))
            } else {
                // Neither committed before nor now: committed by someone else at the same moment;
                // the next look finds it committed.
                outcomes.append(.failed(DeliveryError(code: .changed, message: "\(document.sourcePath) was committed by another intake at the same moment; it is looked at again")))
            }
        }
        return Committed(outcomes: outcomes, taken: taken)
    }

    /// What the fleet keeps of an inbox file.
    func fleetDocument(_ document: DocumentDelivery, identity: String) -> FleetDocument {
        var fleet = FleetDocument(
            deliveryID: document.deliveryID, sourceIdentity: identity,
            fileName: document.fileName ?? InboxNames.display(document.sourceName),
            contentType: document.contentType, extensionChain: document.extensionChain, mailbox: document.mailbox,
            bundleIdentifier: document.bundleIdentifier, sourceApplication: document.sourceApplication,
            annotationJSON: document.annotationJSON ?? "{}", size: document.sourceStatus.size,
            descriptor: document.sourceDescriptor)
        fleet.intakeDetailJSON = Self.intakeDetail(of: document)
        return fleet
    }

    /// Every document of a batch the database did not take: each stays in its inbox, and intake
    /// tries it again with its backoff (``DeliveryErrorCode/ledger`` is retryable).
    func failed(_ documents: [DocumentDelivery], _ error: FleetError) -> Committed {
        let first = !unreachable.withLock { state in defer { state = true }; return state }
        if first {
            logger.error("fleet: documents cannot be committed to PostgreSQL (\(error.code.rawValue)): \(error.message); they stay in their inboxes and are tried again", metadata: [
                "database": "\(databaseAddress)", "files": "\(documents.count)",
            ])
        }
        let failure = DeliveryError(code: .ledger, message: "the fleet's database did not take the document: \(error.message); it stays in its inbox and is tried again")
        return Committed(outcomes: Array(repeating: .failed(failure), count: documents.count), taken: [])
    }

    /// The source's identity in the fleet, from what intake's `fstat` said when it opened it.
    func identity(of document: DocumentDelivery) -> String {
        let status = document.sourceStatus
        return FleetSourceIdentity.text(host: hostName, device: status.device, inode: status.inode, size: status.size,
                                        modificationNanoseconds: status.modificationTimeNanoseconds, path: document.sourcePath)
    }

    /// Why a source may not be committed now: changed since it was opened (size or modification
    /// time), or no longer readable; nil when it is as intake saw it.
    func changed(_ document: DocumentDelivery) -> DeliveryError? {
        let expected = document.sourceStatus
        guard let now = try? document.sourceDescriptor.status() else {
            return DeliveryError(code: .io, message: "\(document.sourcePath) cannot be inspected again; it is tried again")
        }
        guard now.size == expected.size, now.modificationTimeNanoseconds == expected.modificationTimeNanoseconds else {
            return DeliveryError(code: .changed, message: "\(document.sourcePath) changed since it was opened. \(DeliveryError.advice(for: .changed))")
        }
        return nil
    }

    /// Step 3, on the local delivery's source lane: each committed source is taken out of its
    /// inbox if its name still holds the very file committed (``SourceReclaimer``). A failure
    /// leaves the source, which the next look finds committed and removes.
    func removeSources(_ taken: [(document: DocumentDelivery, deliveryID: UUID)]) async {
        guard !taken.isEmpty else { return }
        let freed = try? await local.sourcePool.runIfActive { [reclaimer = local.reclaimer, logger] in
            Self.remove(taken, reclaimer: reclaimer, logger: logger)
        }
        recordFreed(freed ?? [], at: Date())
    }

    /// Takes the sources aside; returns the delivery ids of those taken.
    static func remove(_ taken: [(document: DocumentDelivery, deliveryID: UUID)], reclaimer: SourceReclaimer, logger: Logger) -> [UUID] {
        var freed: [UUID] = []
        var removedIn: [CInt: String] = [:]
        for (document, deliveryID) in taken where document.sourceFolder != nil {
            do {
                let outcome = try reclaimer.takeAside(document.sourceComponent, in: document.sourceDirectory, expected: document.sourceStatus,
                                                      deliveryID: deliveryID, describing: document.sourcePath)
                if outcome == .deferred || outcome == .removed { freed.append(deliveryID) }
                if outcome == .removed { removedIn[document.sourceDirectory.rawValue] = document.sourceFilePath.removingLastComponent().string }
            } catch {
                logger.warning("could not remove a source committed to the fleet; it is removed when it is looked at again", metadata: [
                    "source": "\(document.sourcePath)", "error": "\(error)", "delivery-id": "\(deliveryID.protocolText)",
                ])
            }
        }
        // Removed at once (no reclaim folder on their file system): durable before this returns.
        for (folder, path) in removedIn {
            do {
                try DeliveryError.performing("sync", path) { try FileDescriptor(rawValue: folder).sync() }
            } catch {
                logger.warning("could not sync an inbox folder after removing sources committed to the fleet", metadata: ["folder": "\(path)", "error": "\(error)"])
            }
        }
        return freed
    }

    package func settle() async {
        // A worker clears itself when it ends; one started meanwhile is waited for too.
        while let worker = queued.withLock({ $0.worker }) { await worker.value }
        await history.flush()
        await local.settle()
    }

    package func deliverPackage(_ package: PackageDelivery) async -> DocumentDeliveryOutcome {
        await local.deliverPackage(package)
    }

    package func vetPackage(name: [UInt8], in folder: Int32, path: String) async -> String? {
        await local.vetPackage(name: name, in: folder, path: path)
    }

    package func doneWithPackage(path: String) async {
        await local.doneWithPackage(path: path)
    }

    package func quarantine(name: [UInt8], in folder: Int32, mailbox: String, reason: String, origin: String) async throws {
        try await local.quarantine(name: name, in: folder, mailbox: mailbox, reason: reason, origin: origin)
    }

    package func deliveredParts(messageID: String, mailbox: String) async throws -> Set<String> {
        try await local.deliveredParts(messageID: messageID, mailbox: mailbox)
    }

    package func noteSkipped(_ part: SkippedPart) async {
        await local.noteSkipped(part)
    }
}
