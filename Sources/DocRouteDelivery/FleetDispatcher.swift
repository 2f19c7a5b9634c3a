import DocRouteFleet
import DocRouteIntake
import DocRouteLedger
import DocRoutePlatform
import DocRouteProtocol
import Foundation
import Logging
import NIOPosix
import SystemPackage

/// Brings the fleet's deliveries to the handlers subscribed on this host: for each, it claims a
/// round of them (``FleetQueue/claim(handler:limit:)``), what the window has room for, writes each
/// claimed document's bytes into a memory file (one chunk or less, brought by the claim itself)
/// or a scratch file of the state directory (larger ones), and hands the round to this
/// host's own delivery (``LedgerBackend``) as one batch of ``DocumentDelivery``s with the fleet's
/// delivery ids and no source folder: the local ledger makes the sandbox copy durably, and the local dispatcher sends
/// `launch`/`openURL` and takes the handler's `ack` as for any local document. The `ack` is then
/// recorded in PostgreSQL (``FleetQueue/acknowledge(_:handled:)``).
///
/// The daemon tells it which handlers are subscribed here and what they acknowledge (through the
/// dispatch observer: ``subscribed(_:)``, ``acknowledged(_:handled:)``, ``disconnected(_:)``).
/// At most ``window`` claims per handler wait unacknowledged, so a slow host does not hoard
/// documents other hosts' instances could take. A handler that leaves gives its claims back
/// (``FleetQueue/release(_:)``). Leases are renewed every third of `lease_seconds`.
///
/// It looks for work when PostgreSQL's `NOTIFY` names a handler (``FleetQueue/wakeUps()``), when
/// a handler subscribes or acknowledges, and otherwise polls, waiting from 1 s doubling to 30 s.
package actor FleetDispatcher {
    package static let scratchFolderName = "fleet-copies"
    /// Claims a handler may hold unacknowledged on this host when the caller says nothing; docrouted
    /// gives `max_unacknowledged`, what the local dispatcher lets a handler be sent unacknowledged.
    /// A claim round takes what the window has room for, and each round is one local batch (one
    /// group commit): a small window makes every batch small (bench/fleet-burst.py, 10,000 files,
    /// release build: a window of 16 held the fleet to 0.10 of one host's rate; docs/BENCHMARKS.md).
    package static let defaultWindow = 64

    let queue: FleetQueue
    /// Claims, their bytes and the history's events, on a connection of their own whose commits do
    /// not wait for PostgreSQL's disk (see ``claimRound()`` for why a claim may be lost), so that a
    /// claim waits neither for an acknowledgement's commit nor for a flush of its own.
    let claims: FleetQueue
    /// The history's events this host records after the fact, gathered and written on ``claims``.
    let history: FleetHistoryWriter
    let local: LedgerBackend
    let logger: Logger
    let lease: Duration
    let window: Int
    let scratchPath: FilePath
    /// Writes the memory and scratch files and reads the local ledger for a claim round, off the
    /// cooperative pool and off the local ledger's committing thread.
    let pool: NIOThreadPool
    /// The routing snapshot of the moment: a handler's container and the owner of its copies,
    /// as this host's registry and configuration say.
    var routing: (@Sendable () -> RoutingSnapshot)?
    /// Tells the local dispatcher a handler has a new local delivery.
    var committed: (@Sendable (String) async -> Void)?
    /// Handlers subscribed on this host, by lowercased bundle identifier, as the manifest spells them.
    var subscribed: [String: String] = [:]
    /// Deliveries claimed in this run and not yet acknowledged, with their handler's key.
    var held: [UUID: String] = [:]
    /// Acknowledgements not yet recorded in PostgreSQL (`handled`).
    var acknowledgements: [UUID: Bool] = [:]
    var acknowledgementWriter: Task<Void, Never>?
    var scratch: FileDescriptor?
    /// Ends a pause between claim rounds early: a `NOTIFY`, a subscription, an acknowledgement,
    /// a local commit, a stop.
    let wakeUps = WakeUpSignal()
    var stopped = false
    /// Claim rounds handed to the local delivery whose outcomes have not come back.
    var roundsDelivering = 0
    /// Whether the last claim found PostgreSQL unreachable: said once when it starts, once when it ends.
    var unreachable = false
    /// The last publication of the handlers subscribed here; each waits for the one before.
    var subscriptionPublisher: Task<Void, Never>?
    /// Told of every `NOTIFY` too (``forwardWakeUps(to:)``).
    var launcher: FleetLauncher?
    let started = ContinuousClock.now

    package init(queue: FleetQueue, claims: FleetQueue, history: FleetHistoryWriter, local: LedgerBackend, stateDirectory: String,
                 leaseSeconds: Int, window: Int = FleetDispatcher.defaultWindow, logger: Logger) {
        self.queue = queue
        self.claims = claims
        self.history = history
        self.local = local
        self.logger = logger
        self.lease = .seconds(max(1, leaseSeconds))
        self.window = max(1, window)
        self.scratchPath = FilePath(stateDirectory).appending(Self.scratchFolderName)
        pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
    }

    deinit {
        scratch?.closeIgnoringErrors()
        pool.shutdownGracefully { _ in }
    }

    /// Takes what it needs from the daemon before ``run()``.
    package func start(routing: @escaping @Sendable () -> RoutingSnapshot, committed: @escaping @Sendable (String) async -> Void) {
        self.routing = routing
        self.committed = committed
        // What an earlier run published is stale: nothing is subscribed on a daemon just started.
        publishSubscriptions()
    }

    // MARK: What the dispatch observer tells

    /// A handler subscribed on this host: its deliveries are claimed from now on.
    package nonisolated func subscribed(_ bundleIdentifier: String) {
        Task { await self.noteSubscribed(bundleIdentifier) }
    }

    /// The handler acknowledged (or declined) a delivery on this host.
    package nonisolated func acknowledged(_ deliveryID: String, handled: Bool) {
        Task { await self.noteAcknowledged(deliveryID, handled: handled) }
    }

    /// The handler's connection on this host ended: what it held goes back to the fleet.
    package nonisolated func disconnected(_ bundleIdentifier: String) {
        Task { await self.noteDisconnected(bundleIdentifier) }
    }

    /// Something may be claimable now (a commit on this host, say).
    package nonisolated func wake() {
        wakeUps.poke()
    }

    func noteSubscribed(_ bundleIdentifier: String) {
        subscribed[bundleIdentifier.lowercased()] = bundleIdentifier
        publishSubscriptions()
        poke()
    }

    /// Publishes the handlers subscribed here for other hosts' `status`, in the order the changes
    /// came; each publication reads the set as it is when it runs, so the last one is current.
    func publishSubscriptions() {
        let previous = subscriptionPublisher
        subscriptionPublisher = Task { [queue, logger] in
            await previous?.value
            let names = self.subscribed.values.sorted()
            do {
                try await queue.publishSubscribed(names)
            } catch {
                // Only status reads it; the next change, or the next start, publishes again.
                logger.debug("fleet: the handlers subscribed here could not be published: \(error)")
            }
        }
    }

    func noteAcknowledged(_ deliveryID: String, handled: Bool) {
        // Every acknowledgement goes to PostgreSQL, not only those of claims held in this run: a
        // document copied here before a restart is sent again by the local ledger and acknowledged
        // now. One the fleet never had (a local `open`) changes nothing there.
        guard let id = UUID(canonicalText: deliveryID) else { return }
        held[id] = nil
        acknowledgements[id] = handled
        if acknowledgementWriter == nil {
            acknowledgementWriter = Task { await self.writeAcknowledgements() }
        }
        poke()
    }

    func noteDisconnected(_ bundleIdentifier: String) {
        let key = bundleIdentifier.lowercased()
        subscribed[key] = nil
        publishSubscriptions()
        let given = held.filter { $0.value == key }.map(\.key)
        guard !given.isEmpty else { return }
        // No longer held from now on: neither renewed nor counted against the window meanwhile.
        for id in given { held[id] = nil }
        Task { await giveBack(given, of: bundleIdentifier) }
    }

    // MARK: Running

    /// Claims, copies, acknowledges and renews until cancelled (or ``stop()``).
    package func run() async {
        openScratchFolder()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [queue] in
                for await _ in queue.wakeUps() { await self.heardWakeUp() }
            }
            group.addTask { await self.renewLeases() }
            group.addTask { await self.claimLoop() }
            // Each ends only when the daemon cancels it: a listener that stopped leaves polling.
            await group.waitForAll()
        }
    }

    /// Stops claiming; acknowledgements not yet recorded get a few seconds more. One that does not
    /// make it is found again after a restart: the local ledger has it acknowledged when the
    /// delivery is claimed again.
    package func stop() async {
        stopped = true
        poke()
        if let writer = acknowledgementWriter {
            let deadline = Task {
                guard (try? await Task.sleep(for: .seconds(5))) != nil else { return }
                writer.cancel()
            }
            await writer.value
            deadline.cancel()
        }
        await history.flush()
    }

    enum Round { case claimed, idle, failed, waiting }

    /// How many claim rounds may be in the local delivery at once. Two: the next round's claim,
    /// look-up and bytes overlap this round's copying and commit; a third waits, so the claims
    /// that come meanwhile go into one round (one local group commit) instead of many small ones
    /// that would queue up before the local ledger.
    static let roundsInFlight = 2

    /// How long the first of several acknowledgements waits for the others before they are
    /// recorded in PostgreSQL together.
    static let acknowledgementGathering: Duration = .milliseconds(25)

    func claimLoop() async {
        var backoff: Duration = .seconds(1)
        while !Task.isCancelled && !stopped {
            switch await claimRound() {
            case .claimed:
                backoff = .seconds(1)
            case .idle:
                // Woken by an event (a subscription, an acknowledgement, a NOTIFY), the next poll
                // starts from a second again: a lease about to run out is looked at soon.
                let poked = await sleep(upTo: backoff)
                backoff = poked ? .seconds(1) : min(backoff * 2, .seconds(30))
            case .failed:
                await sleep(upTo: backoff)
                backoff = min(backoff * 2, .seconds(30))
            case .waiting:
                // A round's end pokes; the second is only a bound.
                await sleep(upTo: .seconds(1))
            }
        }
    }

    /// One look at every subscribed handler with room in its window.
    ///
    /// A claim's commit does not wait for PostgreSQL's disk (``claims``). A crash of the server
    /// may lose a claim this host has acted on, copied and announced: the delivery is then owed
    /// again, as if its lease had run out. That is the at-least-once the fleet promises anyway:
    /// this host claiming it again finds it in its ledger and copies nothing twice
    /// (``isKnownLocally(_:known:)``); another host copies it for its own instance; the first
    /// acknowledgement ends it whoever holds it. An acknowledgement's commit is synchronous and
    /// flushes the WAL in order, so a delivery acknowledged never loses the claim before it.
    func claimRound() async -> Round {
        guard roundsDelivering < Self.roundsInFlight else { return .waiting }
        var claimedAny = false
        for (key, bundleIdentifier) in subscribed.sorted(by: { $0.key < $1.key }) {
            let holding = held.values.count { $0 == key }
            let room = window - holding
            // While the handler still has work here, a round waits until a quarter of the window
            // is free: acknowledgements come one by one, and a round for each would make every
            // round (its claim, its query of bytes, its local group commit) one document long.
            guard room > 0, holding == 0 || room >= max(1, window / 4), !stopped else { continue }
            let claims: [FleetClaim]
            var timings = BatchStepTimings()
            do {
                claims = try await self.claims.claim(handler: bundleIdentifier, limit: room, memoryBytes: Self.roundMemoryBytes)
                timings.mark("claim")
            } catch {
                if !unreachable {
                    unreachable = true
                    logger.warning("fleet: deliveries cannot be claimed: \(error.message) (\(error.code.rawValue)); trying again by itself, handlers keep what they have")
                }
                return .failed
            }
            if unreachable {
                unreachable = false
                logger.notice("fleet: deliveries are claimed again")
            }
            if !claims.isEmpty {
                claimedAny = true
                await take(claims, key: key, timings: &timings)
            }
        }
        return claimedAny ? .claimed : .idle
    }

    /// A handler's claimed deliveries: those the local ledger has already (copied before a
    /// restart, or claimed again after a lease ran out) are not copied again; the others are
    /// written to memory or scratch files and handed to the local ledger as one batch (one group
    /// commit), whose outcomes ``finish(_:ticket:writing:timings:)`` takes without holding up the
    /// next claim round.
    func take(_ claims: [FleetClaim], key: String, timings: inout BatchStepTimings) async {
        var fresh: [FleetClaim] = []
        for claim in claims { held[claim.deliveryID] = key }
        let known: [UUID: LedgerRecord]?
        do {
            known = try await local.records(deliveryIDs: claims.map(\.deliveryID), on: pool)
        } catch {
            known = nil
        }
        timings.mark("lookup")
        // The handler may have left this host while the claim and the look-up were on their way:
        // its release gave back what was held then, and these would be held for a whole lease by
        // nobody (one this host copied before would not even be looked at again).
        guard subscribed[key] != nil else { return await giveBack(claims.map(\.deliveryID), of: claims[0].bundleIdentifier) }
        for claim in claims {
            if await isKnownLocally(claim, known: known) { continue }
            fresh.append(claim)
        }
        guard !fresh.isEmpty else { return }
        guard subscribed[key] != nil else { return await giveBack(fresh.map(\.deliveryID), of: fresh[0].bundleIdentifier) }
        var prepared: [(claim: FleetClaim, delivery: DocumentDelivery)] = []
        let made = await prepare(fresh)
        timings.mark("fetch")
        for (claim, result) in made {
            switch result {
            case .success(let delivery):
                // The bytes are in the delivery's memory file now; the round keeps the claim
                // until its local batch ends, and need not keep them twice.
                var claim = claim
                claim.contents = nil
                prepared.append((claim, delivery))
            case .failure(let error):
                failed(claim, error)
                await giveBack(claim)
            }
        }
        guard !prepared.isEmpty else { return }
        // The local delivery closes each descriptor once its outcome is known. The history's
        // `written` takes the time the copies were begun: the local delivery tells the handler as
        // soon as a copy commits, before the round's outcomes come back, and the story reads in
        // order. The round is handed over in claim order (the local batches commit in the order
        // they are submitted) and its outcomes are awaited apart: the next claim round, its query
        // and its bytes overlap this round's copying, sync and commit.
        let writing = Date()
        let ticket = local.submit(prepared.map(\.delivery))
        roundsDelivering += 1
        let finishing = timings
        Task { await self.finish(prepared, ticket: ticket, writing: writing, timings: finishing) }
    }

    /// After a round's local delivery: scratch files removed, copies logged and recorded in the
    /// fleet's history, failures given back, the local dispatcher told.
    func finish(_ prepared: [(claim: FleetClaim, delivery: DocumentDelivery)], ticket: DeliveryTicket, writing: Date,
                timings: BatchStepTimings) async {
        let outcomes = await ticket.outcomes
        roundsDelivering -= 1
        poke()
        var timings = timings
        timings.mark("deliver")
        logger.debug("fleet: claim round", metadata: ["claims": "\(prepared.count)", "steps": "\(timings)"])
        // Only the larger documents have scratch files; the others were in memory files.
        await removeScratchFiles(prepared.filter { $0.delivery.sourcePath.hasPrefix(scratchPath.string + "/") }.map(\.claim))
        var copied = false
        var written: [(deliveryID: UUID, path: String)] = []
        defer { recordWritten(written, at: writing) }
        for (index, item) in prepared.enumerated() {
            let claim = item.claim
            switch index < outcomes.count ? outcomes[index] : nil {
            case .committed(_, let finalPath, _, _)?:
                copied = true
                written.append((claim.deliveryID, finalPath))
                logger.info("fleet: delivery copied from the fleet", metadata: [
                    "delivery-id": "\(claim.deliveryID.protocolText)", "bundle-id": "\(claim.bundleIdentifier)",
                    "intake-host": "\(claim.intakeHost)", "original-name": "\(claim.fileName)", "path": "\(finalPath)",
                    "attempt": "\(claim.attempts)",
                ])
            case .failed(let error)?:
                failed(claim, error)
                await giveBack(claim)
            case .alreadyDelivered?, nil:
                failed(claim, DeliveryError(code: .io, message: "the local delivery did not commit it"))
                await giveBack(claim)
            }
        }
        if copied, let bundle = prepared.first?.claim.bundleIdentifier { await committed?(bundle) }
    }

    /// Whether the local ledger has the claim already, settling it if so: acknowledged here (and
    /// the fleet did not hear of it, a crash in between), its acknowledgement goes to the fleet;
    /// still owed, the local dispatcher sends it. A ledger that cannot be read gives it back.
    /// `records` is what one read of the ledger found for the whole round; when that read failed
    /// (nil), each claim is looked up alone.
    func isKnownLocally(_ claim: FleetClaim, known records: [UUID: LedgerRecord]?) async -> Bool {
        let known: LedgerRecord?
        do {
            if let records {
                known = records[claim.deliveryID]
            } else {
                known = try await local.record(deliveryID: claim.deliveryID)
            }
        } catch {
            failed(claim, DeliveryError(code: .ledger, message: "the local ledger could not be read: \(error)"))
            await giveBack(claim)
            return true
        }
        guard let known else { return false }
        switch known.state {
        case .acknowledged, .declined:
            noteAcknowledged(claim.deliveryID.protocolText, handled: known.state == .acknowledged)
        case .committed, .staged:
            logger.debug("fleet: claimed a delivery this host copied before; not copied again", metadata: [
                "delivery-id": "\(claim.deliveryID.protocolText)", "bundle-id": "\(claim.bundleIdentifier)",
            ])
            await committed?(claim.bundleIdentifier)
        }
        return true
    }

    func failed(_ claim: FleetClaim, _ error: any Error) {
        logger.error("fleet: a claimed delivery could not be copied into the sandbox; it goes back to the fleet: \(error)", metadata: [
            "delivery-id": "\(claim.deliveryID.protocolText)", "bundle-id": "\(claim.bundleIdentifier)", "original-name": "\(claim.fileName)",
        ])
    }

    /// Gives deliveries back together, their handler gone from this host: when it leaves, and
    /// when a claim round comes back after it left.
    func giveBack(_ deliveryIDs: [UUID], of bundleIdentifier: String) async {
        for id in deliveryIDs { held[id] = nil }
        do {
            try await queue.release(deliveryIDs)
            logger.info("fleet: deliveries given back, their handler left this host", metadata: [
                "bundle-id": "\(bundleIdentifier)", "deliveries": "\(deliveryIDs.count)",
            ])
        } catch {
            logger.warning("fleet: deliveries could not be given back; their leases run out instead: \(error.message)", metadata: [
                "bundle-id": "\(bundleIdentifier)",
            ])
        }
    }

    func giveBack(_ claim: FleetClaim) async {
        held[claim.deliveryID] = nil
        do {
            try await queue.release([claim.deliveryID])
        } catch {
            logger.warning("fleet: a delivery could not be given back; its lease runs out instead: \(error.message)", metadata: ["delivery-id": "\(claim.deliveryID.protocolText)"])
        }
    }

    /// A scratch file's name: its delivery's id.
    static func scratchName(_ claim: FleetClaim) -> FilePath.Component {
        FilePath.Component(claim.deliveryID.ledgerText + ".copy")!
    }

    /// How many bytes of small documents one query fetches at most (they are in memory together
    /// until written to their scratch files).
    static let smallDocumentBytes: Int64 = 16 << 20

    /// How many bytes of small documents one claim round takes at most: they are in memory files
    /// (shared memory) together until the round's local batch commits, which a window of
    /// `max_unacknowledged` documents of up to a chunk each would make 64 MiB by default. What is
    /// past it waits for the next round, which follows at once; the round's bytes are then one
    /// query (``smallDocumentBytes``).
    static let roundMemoryBytes: Int64 = smallDocumentBytes

    /// The deliveries of `claims`, in their order, each or why it could not be made: documents of
    /// one chunk (their bytes from the claim, or fetched together by
    /// ``FleetQueue/smallDocuments(_:)``, up to ``smallDocumentBytes`` a query) are written to
    /// memory files in one job of the pool; larger
    /// ones are copied a chunk at a time into scratch files (``prepare(_:)``).
    func prepare(_ claims: [FleetClaim]) async -> [(FleetClaim, Result<DocumentDelivery, any Error>)] {
        var results: [UUID: Result<DocumentDelivery, any Error>] = [:]
        var group: [FleetClaim] = []
        var groupBytes: Int64 = 0
        for claim in claims where claim.size <= Int64(FleetQueue.chunkSize) {
            if groupBytes + claim.size > Self.smallDocumentBytes, !group.isEmpty {
                for (id, result) in await prepareSmall(group) { results[id] = result }
                group.removeAll()
                groupBytes = 0
            }
            group.append(claim)
            groupBytes += claim.size
        }
        if !group.isEmpty {
            for (id, result) in await prepareSmall(group) { results[id] = result }
        }
        var ordered: [(FleetClaim, Result<DocumentDelivery, any Error>)] = []
        for claim in claims {
            if let result = results[claim.deliveryID] {
                ordered.append((claim, result))
                continue
            }
            do {
                ordered.append((claim, .success(try await prepare(claim))))
            } catch {
                ordered.append((claim, .failure(error)))
            }
        }
        return ordered
    }

    /// Small documents' deliveries, by delivery id: their bytes in one query, their memory files
    /// written in one job of the pool. A document whose bytes the query did not bring is left out
    /// (``prepare(_:)`` copies it alone and says what is wrong).
    func prepareSmall(_ claims: [FleetClaim]) async -> [UUID: Result<DocumentDelivery, any Error>] {
        guard let snapshot = routing?() else { return [:] }
        guard snapshot.registry.handler(for: claims[0].bundleIdentifier) != nil else { return [:] }
        // The claim brought the bytes of each whose chunk it found; the others are asked for.
        var contents: [UUID: [UInt8]] = [:]
        for claim in claims { if let bytes = claim.contents { contents[claim.documentID] = bytes } }
        let missing = claims.filter { $0.size > 0 && contents[$0.documentID] == nil }
        if !missing.isEmpty {
            do {
                let fetched = try await self.claims.smallDocuments(Dictionary(missing.map { ($0.documentID, $0.size) }, uniquingKeysWith: { first, _ in first }))
                contents.merge(fetched) { first, _ in first }
            } catch {
                return Dictionary(uniqueKeysWithValues: missing.map { ($0.deliveryID, .failure(error)) })
            }
        }
        let writable = claims.compactMap { claim -> (FleetClaim, [UInt8])? in
            if claim.size == 0 { return (claim, []) }
            return contents[claim.documentID].map { (claim, $0) }
        }
        let written: [(FleetClaim, Result<IntakeFile, any Error>)]
        do {
            written = try await pool.runIfActive {
                writable.map { claim, bytes in
                    let name = Self.scratchName(claim)
                    let path = Self.memoryFilePath(name)
                    return (claim, Result { try Self.writeMemoryFile(name, path: path, bytes: bytes, size: claim.size) })
                }
            }
        } catch {
            return Dictionary(uniqueKeysWithValues: writable.map { ($0.0.deliveryID, .failure(error)) })
        }
        var results: [UUID: Result<DocumentDelivery, any Error>] = [:]
        for (claim, file) in written {
            results[claim.deliveryID] = file.flatMap { file in
                Result { try Self.delivery(of: claim, from: file, path: Self.memoryFilePath(Self.scratchName(claim)), snapshot: snapshot) }
            }
            if case .failure = results[claim.deliveryID], case .success(let file) = file {
                FileDescriptor(rawValue: file.descriptor).closeIgnoringErrors()
            }
        }
        return results
    }

    /// A memory file (``FileDescriptor/memoryFile(named:)``) holding `bytes`, adopted for the
    /// local delivery. Nothing on disk: creating and removing thousands of scratch files a second
    /// made the file system search its inode table for one not recently deleted, for a third of
    /// the claiming host's time. Only for documents of one chunk (at most
    /// ``FleetQueue/chunkSize``): a larger one would be in memory whole. Not durable, and need not
    /// be: until the local ledger commits, PostgreSQL still holds the claim and the bytes (a crash
    /// loses only memory); once it commits, the sandbox copy it made is durable.
    static func writeMemoryFile(_ name: FilePath.Component, path: String, bytes: [UInt8], size: Int64) throws -> IntakeFile {
        let descriptor = try DeliveryError.performing("create", path) { try FileDescriptor.memoryFile(named: name.string) }
        do {
            try DeliveryError.performing("write", path) {
                try bytes.withUnsafeBytes { raw in try descriptor.writeAll(from: raw, atOffset: 0) }
            }
            return try adoptScratchFile(descriptor, path: path, size: size)
        } catch {
            descriptor.closeIgnoringErrors()
            throw error
        }
    }

    /// How messages name a memory file: no path reaches it.
    static func memoryFilePath(_ name: FilePath.Component) -> String {
        "memory file \(name.string)"
    }

    /// The scratch file as the local delivery's source, checked to hold the document's `size`.
    static func adoptScratchFile(_ descriptor: FileDescriptor, path: String, size: Int64) throws -> IntakeFile {
        let file: IntakeFile
        switch IntakeFile.adopt(descriptor: descriptor.rawValue, maxSize: .max) {
        case .success(let adopted): file = adopted
        case .failure(let refusal): throw DeliveryError(code: .io, message: "\(path): \(refusal)")
        }
        guard file.size == size else {
            throw DeliveryError(code: .changed, message: "\(path) holds \(file.size) bytes, the fleet's document \(size)")
        }
        return file
    }

    /// The delivery of a claim's scratch file under the claim's delivery id, for the local ledger:
    /// no source folder (the scratch file is removed by this dispatcher, never by the delivery),
    /// the handler's container and the owner of its copies as this host's registry says.
    static func delivery(of claim: FleetClaim, from file: IntakeFile, path: String, snapshot: RoutingSnapshot) throws -> DocumentDelivery {
        guard let handler = snapshot.registry.handler(for: claim.bundleIdentifier) else {
            throw DeliveryError(code: .io, message: "\(claim.bundleIdentifier) is not among this host's handlers")
        }
        var delivery = DocumentDelivery(
            deliveryID: claim.deliveryID, source: file, sourceFolder: nil, sourceName: Array(claim.fileName.utf8), sourcePath: path,
            containerRoot: snapshot.containerRoot(of: handler), mailbox: claim.mailbox, extensionChain: claim.extensionChain,
            contentType: claim.contentType, bundleIdentifier: handler.bundleIdentifier, owner: snapshot.copyOwner(of: handler),
            sourceApplication: claim.sourceApplication, annotation: Self.annotation(claim.annotationJSON), fileName: claim.fileName)
        delivery.inbox = "fleet host \(claim.intakeHost)"
        return delivery
    }

    /// Writes the claim's bytes to a scratch file (created exclusively, 0600), a chunk at a time;
    /// returns its delivery (``delivery(of:from:path:snapshot:)``). Not synced: until the local
    /// ledger commits, PostgreSQL still holds the claim and the bytes (a crash loses only a
    /// scratch file, which the next start removes); once it commits, the sandbox copy is durable.
    func prepare(_ claim: FleetClaim) async throws -> DocumentDelivery {
        guard let snapshot = routing?(), snapshot.registry.handler(for: claim.bundleIdentifier) != nil else {
            throw DeliveryError(code: .io, message: "\(claim.bundleIdentifier) is not among this host's handlers")
        }
        guard let folder = scratch ?? openScratchFolder() else {
            throw DeliveryError(code: .io, message: "the scratch folder \(scratchPath.string) cannot be opened")
        }
        let name = Self.scratchName(claim)
        let path = scratchPath.appending(name).string
        let descriptor = try await pool.runIfActive { try Self.createScratchFile(name, in: folder, path: path) }
        do {
            try await self.claims.copyBytes(of: claim.documentID, to: descriptor)
            let file = try Self.adoptScratchFile(descriptor, path: path, size: claim.size)
            return try Self.delivery(of: claim, from: file, path: path, snapshot: snapshot)
        } catch {
            descriptor.closeIgnoringErrors()
            await removeScratchFiles([claim])
            throw error
        }
    }

    func removeScratchFiles(_ claims: [FleetClaim]) async {
        guard let folder = scratch else { return }
        let names = claims.map(Self.scratchName)
        _ = try? await pool.runIfActive {
            for name in names { _ = try? folder.unlink(name) }
        }
    }

    static func createScratchFile(_ name: FilePath.Component, in folder: FileDescriptor, path: String) throws -> FileDescriptor {
        // A file of this name is one a crash left, mid-copy: it is made anew.
        _ = try? folder.unlink(name)
        return try DeliveryError.performing("create", path) {
            try folder.open(name, .readWrite, options: [.create, .exclusiveCreate], permissions: 0o600)
        }
    }

    /// The extra annotation entries the intake host recorded (a JSON object); none when they
    /// cannot be read.
    static func annotation(_ json: String) -> [String: PropertyListValue] {
        (try? JSONDecoder().decode([String: PropertyListValue].self, from: Data(json.utf8))) ?? [:]
    }

    /// Creates (0700) and opens the scratch folder, removing what a previous run left in it.
    @discardableResult
    func openScratchFolder() -> FileDescriptor? {
        if let scratch { return scratch }
        do {
            let parent = try DeliveryError.performing("open folder", scratchPath.removingLastComponent().string) {
                try FileDescriptor.openDirectory(atPath: scratchPath.removingLastComponent())
            }
            defer { parent.closeIgnoringErrors() }
            let name = FilePath.Component(Self.scratchFolderName)!
            try DeliveryError.performing("create folder", scratchPath.string) { try parent.makeDirectory(name, permissions: 0o700) }
            let folder = try DeliveryError.performing("open folder", scratchPath.string) { try parent.openDirectory(name) }
            for leftover in (try? folder.directoryNames()) ?? [] { _ = try? folder.unlink(leftover) }
            scratch = folder
            return folder
        } catch {
            logger.error("fleet: the scratch folder for claimed documents cannot be made; nothing is copied from the fleet: \(error)")
            return nil
        }
    }

    // MARK: Acknowledgements and leases

    /// Records acknowledgements in PostgreSQL until none is left; while it cannot be reached, they
    /// wait here and are tried again (1 s doubling to 30 s).
    func writeAcknowledgements() async {
        defer { acknowledgementWriter = nil }
        var backoff: Duration = .seconds(1)
        var failing = false
        while !acknowledgements.isEmpty {
            // Those that come within a moment go in the same transaction: a handler acknowledging
            // a steady trickle one by one would otherwise cost PostgreSQL a transaction (six
            // statements and a flush) per acknowledgement or two. The local ledger has them
            // already; only the fleet hears of them later.
            if !failing { try? await Task.sleep(for: Self.acknowledgementGathering) }
            let batch = acknowledgements
            acknowledgements.removeAll()
            do {
                for handled in [true, false] {
                    let ids = batch.filter { $0.value == handled }.map(\.key)
                    if !ids.isEmpty { _ = try await queue.acknowledge(ids, handled: handled) }
                }
                recordTold(Array(batch.keys))
                if failing { logger.notice("fleet: acknowledgements recorded again") }
                failing = false
                backoff = .seconds(1)
            } catch {
                for (id, handled) in batch where acknowledgements[id] == nil { acknowledgements[id] = handled }
                if !failing {
                    logger.warning("fleet: acknowledgements cannot be recorded: \(error.message); kept and tried again", metadata: ["acknowledgements": "\(acknowledgements.count)"])
                }
                failing = true
                if Task.isCancelled { return }
                guard (try? await Task.sleep(for: backoff)) != nil else { return }
                backoff = min(backoff * 2, .seconds(30))
            }
        }
    }

    /// Renews the leases of the claims this run holds every third of `lease_seconds`, from the
    /// first lease after the start on: what this host held before a restart, or claimed without
    /// hearing the answer, runs out and is claimed again (by this host too), instead of being
    /// kept for ever.
    func renewLeases() async {
        let period = lease / 3
        while !Task.isCancelled {
            guard (try? await Task.sleep(for: period)) != nil else { return }
            guard ContinuousClock.now - started >= lease - period / 2, !held.isEmpty else { continue }
            do {
                // Only the claims this run holds: one lost on the way (its answer cut off with the
                // connection, or not given back) runs out and goes to whichever host claims next.
                _ = try await queue.renewLeases(of: Array(held.keys))
            } catch {
                logger.debug("fleet: leases not renewed: \(error.message)")
            }
        }
    }

    // MARK: Waiting

    func poke() {
        wakeUps.poke()
    }

    /// Waits until poked or `duration` has passed; true when poked, and at once once stopped.
    @discardableResult
    func sleep(upTo duration: Duration) async -> Bool {
        if stopped { return true }
        return await wakeUps.sleep(upTo: duration)
    }
}
