import DocRouteHandlers
import Foundation
import DocRouteLedger
import DocRouteProtocol
import Logging

/// Sends each handler what the ledger says it is owed: one `launch` per subscription, then
/// `openURL` in commit order, at most `window` unacknowledged at a time per connection.
///
/// A handler has one live connection, or several that asked to compete (`"compete":true` on
/// `subscribe`, feature `compete`): each delivery then goes to one of them at a time, the one with
/// the fewest in flight, so a slow instance fills only its own window. Order holds per connection.
///
/// Acknowledgements are buffered and written to the ledger in batches, in the background: an
/// `ack` never waits for a disk flush, so a handler that acknowledges each event at once is not
/// held to one flush per event. An acknowledgement lost in a crash only means the document is
/// sent again, which the protocol allows (at least once); ``acknowledgementsWritten()`` lets a
/// later request see them all on disk.
///
/// The window is refilled a quarter at a time (or when it is empty), so a burst costs one ledger
/// read per quarter window rather than one per acknowledgement.
package actor HandlerDispatcher {
    /// One connection subscribed as a handler.
    struct Instance {
        var connection: ClientConnection
        /// Delivery id to what was sent, not yet acknowledged.
        var inFlight: [String: InFlight] = [:]
        /// Nothing but `subscribed` and then `launch` may go out first: until both are sent, a
        /// commit arriving meanwhile (the actor is re-entered while the ledger is read) waits.
        var launched = false
    }

    /// A handler's live connections: one, or several competing ones.
    struct Group {
        /// Tells this group from one made after it for the same handler, across an await.
        var generation: UInt64
        /// As the manifest spells it, for ledger queries.
        var bundleIdentifier: String
        /// Whether the connections asked to compete; a group that did not has exactly one.
        var competing: Bool
        var instances: [Instance]
        /// Where the next ledger read starts: the highest sequence sent, or lower while
        /// deliveries that a departed competing connection left unacknowledged wait to go out again.
        var cursor: Int64 = 0
        /// The highest sequence sent on any of the connections.
        var highestSent: Int64 = 0
        /// Deliveries sent to a competing connection that closed without acknowledging them: owed
        /// again at once, to the others, under the same ids.
        var returned: Set<String> = []
        var pumping = false
        var repump = false
        /// The last ledger read found fewer owed than there was room for: everything owed was
        /// sent, so a document committed now is worth a read even with less than a refill free.
        var caughtUp = false

        func index(of connection: ClientConnection) -> Int? {
            instances.firstIndex { $0.connection == connection }
        }

        var inFlightCount: Int { instances.reduce(0) { $0 + $1.inFlight.count } }

        /// Whether `delivery`, read from the ledger as owed, may go out now: not in flight on any
        /// connection, and either never sent or given back by a connection that closed (what is
        /// neither was acknowledged, its acknowledgement not yet written).
        func mayGoOut(_ delivery: OwedDelivery) -> Bool {
            let id = delivery.event.deliveryID
            if delivery.sequence > highestSent { return true }
            return returned.contains(id) && !instances.contains { $0.inFlight[id] != nil }
        }

        /// The launched connection with the most room, if any has room.
        func roomiest(window: Int) -> Int? {
            if instances.count == 1 { return instances[0].launched && instances[0].inFlight.count < window ? 0 : nil }
            var best: Int?
            for (index, instance) in instances.enumerated() where instance.launched && instance.inFlight.count < window {
                if best == nil || instance.inFlight.count < instances[best!].inFlight.count { best = index }
            }
            return best
        }
    }

    /// One event sent and not yet acknowledged: its place in the commit order, and the document's
    /// name for the acknowledgement's log line.
    struct InFlight {
        var sequence: Int64
        var originalName: String
    }

    let store: any DeliveryStore
    let window: Int
    let logger: Logger
    /// Told of every send, acknowledgement and disconnection, for status and metrics.
    let activity: (any DispatchObserver)?
    /// Keyed by the lowercased bundle identifier.
    var groups: [String: Group] = [:]
    var nextGeneration: UInt64 = 1
    var pendingAcknowledgements: [DeliveryAcknowledgement] = []
    /// Which deliveries were sent, on which connection, for their history: written in bulk with
    /// the acknowledgements, by the same writer.
    var pendingNotices: [DeliveryNotice] = []
    /// Writes ``pendingAcknowledgements`` until none is left; nil when idle.
    var acknowledgementWriter: Task<Void, Never>?
    /// Called when a document is committed for a handler that no connection is subscribed as.
    let onUnsubscribedDelivery: @Sendable (String) -> Void
    /// Whether the debug log gets the dispatch and acknowledgement step timings (for
    /// `bench/step-profile.py`); decided once, so that no acknowledgement reads the clock otherwise.
    let profiling: Bool
    /// Time spent taking in acknowledgements (bookkeeping, not the pump they trigger) since the
    /// acknowledgement writer last logged, and how many; only while ``profiling``.
    var acknowledgementIntake: (count: Int, duration: Duration) = (0, .zero)

    package init(store: any DeliveryStore, window: Int, activity: (any DispatchObserver)? = nil, logger: Logger,
                onUnsubscribedDelivery: @escaping @Sendable (String) -> Void = { _ in }) {
        self.store = store
        self.activity = activity
        self.window = max(1, window)
        self.logger = logger
        self.onUnsubscribedDelivery = onUnsubscribedDelivery
        profiling = logger.logLevel <= .debug
    }

    /// Whether a live connection is subscribed as the handler.
    package func isSubscribed(_ bundleIdentifier: String) -> Bool {
        groups[bundleIdentifier.lowercased()] != nil
    }

    /// Unacknowledged events in flight for a handler, over all its connections.
    package func inFlightCount(_ bundleIdentifier: String) -> Int {
        groups[bundleIdentifier.lowercased()]?.inFlightCount ?? 0
    }

    /// How many connections are subscribed as the handler (more than one only when they compete).
    package func instanceCount(_ bundleIdentifier: String) -> Int {
        groups[bundleIdentifier.lowercased()]?.instances.count ?? 0
    }

    /// Makes `connection` the handler's live connection, or with `compete` one of its competing
    /// connections: replies `subscribed`, then the `launch`.
    package func subscribe(_ handler: RegisteredHandler, connection: ClientConnection, requestID: String?, compete: Bool = false) async -> ProtocolError? {
        let key = handler.bundleIdentifier.lowercased()
        if groups[key]?.index(of: connection) != nil {
            return ProtocolError(code: .alreadySubscribed, message: "this connection is already subscribed as \(handler.bundleIdentifier)", requestID: requestID)
        }
        // One handler per connection: acknowledgements name no handler, so a second subscription
        // on the same connection would make the first one's acks ambiguous.
        if let other = groups.values.first(where: { $0.index(of: connection) != nil }) {
            return ProtocolError(code: .alreadySubscribed, message: "this connection is subscribed as \(other.bundleIdentifier) already; a connection serves one handler, so open another connection for \(handler.bundleIdentifier)", requestID: requestID)
        }
        if let existing = groups[key], !(existing.competing && compete) {
            // A connection that did not ask to compete keeps the handler to itself, and one that
            // did never joins a connection that did not: a client relying on `already-subscribed`
            // as a lock of sorts keeps it.
            let message = existing.competing
                ? "\(existing.instances.count) competing connection(s) are subscribed as \(handler.bundleIdentifier); subscribe with \"compete\":true to join them, or close them first"
                : "another connection (\(existing.instances[0].connection.credentials)) is subscribed as \(handler.bundleIdentifier); close it first"
                    + (compete ? " (it did not ask to compete)" : "")
            return ProtocolError(code: .alreadySubscribed, message: message, requestID: requestID)
        }
        let joining = groups[key] != nil
        if joining {
            groups[key]!.instances.append(Instance(connection: connection))
        } else {
            groups[key] = Group(generation: nextGeneration, bundleIdentifier: handler.bundleIdentifier, competing: compete,
                                instances: [Instance(connection: connection)])
            nextGeneration += 1
        }
        let generation = groups[key]!.generation
        // What an earlier connection acknowledged must not come back as owed.
        await acknowledgementsWritten()
        do {
            let owedCount = try await store.owedCount(bundleIdentifier: handler.bundleIdentifier)
            guard groups[key]?.generation == generation, groups[key]?.index(of: connection) != nil else { return nil }
            // Owed and not in flight on another of the handler's connections.
            let pending = max(0, owedCount - groups[key]!.inFlightCount)
            let inFlightElsewhere = groups[key]!.inFlightCount
            let candidates = try await store.owed(bundleIdentifier: handler.bundleIdentifier, afterSequence: groups[key]!.cursor,
                                                  limit: 1 + inFlightElsewhere)
            guard groups[key]?.generation == generation, let index = groups[key]!.index(of: connection) else { return nil }
            connection.send(.subscribed(id: requestID, bundleIdentifier: handler.bundleIdentifier, pending: pending))
            if let first = candidates.first(where: { groups[key]!.mayGoOut($0) }) {
                connection.send(.launch(first.event))
                noteSent([first], as: .launch, on: connection)
                activity?.sent(handler.bundleIdentifier, deliveryID: first.event.deliveryID)
                let name = Self.originalName(of: first.event)
                logSent(first.event, as: "launch", name: name, bundleIdentifier: handler.bundleIdentifier)
                groups[key]!.instances[index].inFlight[first.event.deliveryID] = InFlight(sequence: first.sequence, originalName: name)
                markSent(first, in: key)
            } else {
                connection.send(.plainLaunch)
            }
            groups[key]!.instances[index].launched = true
            activity?.subscribed(handler.bundleIdentifier, pending: pending)
            logger.info("handler subscribed", metadata: [
                "bundle-id": "\(handler.bundleIdentifier)", "pending": "\(pending)", "peer": "\(connection.credentials)",
            ].merging(compete ? ["competing": "\(groups[key]!.instances.count)"] : [:]) { $1 })
        } catch {
            remove(connection, from: key)
            return ProtocolError(code: .internal, message: "the ledger could not be read: \(error)", requestID: requestID)
        }
        await pump(key)
        return nil
    }

    /// A document was committed for a handler: send it if the handler is subscribed and has room.
    package func committed(bundleIdentifier: String) async {
        let key = bundleIdentifier.lowercased()
        guard groups[key] != nil else {
            onUnsubscribedDelivery(bundleIdentifier)
            return
        }
        await pump(key)
    }

    /// An `ack` from `connection`. Only deliveries sent on that connection can be acknowledged.
    package func acknowledge(deliveryID: String, handled: Bool, connection: ClientConnection, requestID: String?) async -> ProtocolError? {
        let started = profiling ? ContinuousClock.now : nil
        // No copy of the group is held while an `inFlight` changes: a copy would make the change
        // copy the whole window's dictionary, once per acknowledgement.
        guard let key = groups.first(where: { $0.value.index(of: connection) != nil })?.key,
              let index = groups[key]?.index(of: connection),
              let sent = groups[key]?.instances[index].inFlight.removeValue(forKey: deliveryID),
              let bundleIdentifier = groups[key]?.bundleIdentifier
        else {
            return ProtocolError(code: .notFound, message: "no delivery '\(deliveryID)' is waiting for an acknowledgement on this connection", requestID: requestID)
        }
        activity?.acknowledged(bundleIdentifier, deliveryID: deliveryID, handled: handled, originalName: sent.originalName)
        // Each answer, so that the journal's entries of one delivery id tell its whole story.
        logger.info(handled ? "acknowledged" : "declined", metadata: [
            "delivery-id": "\(deliveryID.lowercased())", "original-name": "\(sent.originalName)", "bundle-id": "\(bundleIdentifier)",
        ])
        pendingAcknowledgements.append(DeliveryAcknowledgement(deliveryID: deliveryID, bundleIdentifier: bundleIdentifier, handled: handled))
        if acknowledgementWriter == nil {
            acknowledgementWriter = Task { await self.writeAcknowledgements() }
        }
        if let started {
            acknowledgementIntake.count += 1
            acknowledgementIntake.duration += ContinuousClock.now - started
        }
        await pump(key)
        return nil
    }

    /// The connection closed. Its unacknowledged events stay owed: they go out on the next
    /// subscription, or at once to the handler's other competing connections.
    package func disconnected(_ connection: ClientConnection) async {
        guard let key = groups.first(where: { $0.value.index(of: connection) != nil })?.key,
              let index = groups[key]?.index(of: connection)
        else { return }
        let instance = groups[key]!.instances[index]
        let bundleIdentifier = groups[key]!.bundleIdentifier
        remove(connection, from: key)
        let remaining = groups[key]?.instances.count ?? 0
        activity?.disconnected(bundleIdentifier, deliveryIDs: Array(instance.inFlight.keys), stillSubscribed: remaining > 0)
        logger.info("handler disconnected", metadata: [
            "bundle-id": "\(key)", "unacknowledged": "\(instance.inFlight.count)",
        ].merging(remaining > 0 ? ["competing": "\(remaining)"] : [:]) { $1 })
        if remaining > 0 { await pump(key) }
    }

    /// Takes `connection` out of the handler's group; what it had in flight is given back to the
    /// others, or the group ends with it.
    private func remove(_ connection: ClientConnection, from key: String) {
        guard let index = groups[key]?.index(of: connection) else { return }
        let instance = groups[key]!.instances.remove(at: index)
        guard !groups[key]!.instances.isEmpty else {
            groups[key] = nil
            return
        }
        for (deliveryID, sent) in instance.inFlight {
            groups[key]!.returned.insert(deliveryID)
            groups[key]!.cursor = min(groups[key]!.cursor, sent.sequence - 1)
        }
    }

    /// Notes that `delivery` went out: the read cursor moves past it unless deliveries given back
    /// lie behind it.
    private func markSent(_ delivery: OwedDelivery, in key: String) {
        groups[key]!.highestSent = max(groups[key]!.highestSent, delivery.sequence)
        if !groups[key]!.returned.isEmpty { groups[key]!.returned.remove(delivery.event.deliveryID) }
        if groups[key]!.returned.isEmpty { groups[key]!.cursor = max(groups[key]!.cursor, groups[key]!.highestSent) }
    }

    /// Keeps, for the history, that `deliveries` were sent on `connection`; the acknowledgement
    /// writer records them in bulk.
    func noteSent(_ deliveries: [OwedDelivery], as message: DeliveryNotice.Message, on connection: ClientConnection) {
        guard !deliveries.isEmpty else { return }
        let now = Date()
        let to = "connection \(connection.id) (\(connection.credentials))"
        for delivery in deliveries {
            pendingNotices.append(DeliveryNotice(deliveryID: delivery.event.deliveryID, sequence: delivery.sequence,
                                                 message: message, connection: to, at: now))
        }
        if acknowledgementWriter == nil {
            acknowledgementWriter = Task { await self.writeAcknowledgements() }
        }
    }

    /// Returns once every acknowledgement received so far is in the ledger (or failed to be).
    package func acknowledgementsWritten() async {
        while let writer = acknowledgementWriter { await writer.value }
    }

    /// Writes buffered acknowledgements, one transaction for all that arrived meanwhile.
    private func writeAcknowledgements() async {
        defer { acknowledgementWriter = nil }
        while !pendingAcknowledgements.isEmpty || !pendingNotices.isEmpty {
            let batch = pendingAcknowledgements
            pendingAcknowledgements.removeAll(keepingCapacity: true)
            let notices = pendingNotices
            pendingNotices.removeAll(keepingCapacity: true)
            let started = profiling ? ContinuousClock.now : nil
            do {
                try await store.acknowledge(batch, notices: notices)
            } catch {
                logger.error("acknowledgements could not be recorded; the documents will be sent again: \(error)")
            }
            if let started {
                // The step `ack`: taking them in, then writing them to the ledger (in the background).
                let intake = acknowledgementIntake
                acknowledgementIntake = (0, .zero)
                logger.debug("acknowledgements written", metadata: [
                    "acknowledgements": "\(batch.count)",
                    "steps": "ack=\(Self.microseconds(intake.duration + (ContinuousClock.now - started)))us",
                ])
            }
        }
    }

    static func microseconds(_ duration: Duration) -> Int { Int(duration / .microseconds(1)) }

    /// The document's name as it came (its annotation's `originalFilename`); a custom-scheme URL
    /// is its own name.
    static func originalName(of event: DocumentEvent) -> String {
        if case .string(let name)? = event.annotation["originalFilename"] { return name }
        return event.urlString
    }

    /// One line per event sent (`launch` or `openURL`), with the delivery id and the name.
    func logSent(_ event: DocumentEvent, as kind: String, name: String, bundleIdentifier: String) {
        logger.info("sent as \(kind)", metadata: [
            "delivery-id": "\(event.deliveryID.lowercased())", "original-name": "\(name)", "bundle-id": "\(bundleIdentifier)",
        ])
    }

    /// Free slots that make a ledger read worth it while events are still in flight.
    var refillSize: Int { max(1, window / 4) }

    /// Where the read starts and how many to read (the room over the group's launched
    /// connections, and past what is in flight when reading behind it), when a ledger read is
    /// worth it now. (A function of its own
    /// so that its copy of the group is gone before the read.)
    private func refill(_ key: String) -> (cursor: Int64, limit: Int)? {
        guard let group = groups[key] else { return nil }
        var room = 0
        var anyEmpty = false
        for instance in group.instances where instance.launched {
            room += max(0, window - instance.inFlight.count)
            anyEmpty = anyEmpty || instance.inFlight.isEmpty
        }
        // Without `caughtUp`, a window filled one commit at a time could stop one short of full
        // for as long as the handler does not acknowledge.
        guard room > 0, room >= refillSize || anyEmpty || group.caughtUp || !group.returned.isEmpty else { return nil }
        // Read behind the highest sent only for what was given back; what is in flight there is
        // read too and passed over.
        let limit = group.returned.isEmpty ? room : room + group.inFlightCount
        return (group.cursor, limit)
    }

    func pump(_ key: String) async {
        guard let generation = groups[key]?.generation else { return }
        if groups[key]!.pumping {
            // A pump is already reading the ledger; make it look again before it stops.
            groups[key]!.repump = true
            return
        }
        groups[key]!.pumping = true
        defer { if groups[key]?.generation == generation { groups[key]!.pumping = false } }
        while groups[key]?.generation == generation {
            groups[key]!.repump = false
            guard let (cursor, limit) = refill(key) else { return }
            let bundleIdentifier = groups[key]!.bundleIdentifier
            let started = profiling ? ContinuousClock.now : nil
            let owed: [OwedDelivery]
            do {
                owed = try await store.owed(bundleIdentifier: bundleIdentifier, afterSequence: cursor, limit: limit)
            } catch {
                logger.error("the ledger could not be read: \(error)", metadata: ["bundle-id": "\(bundleIdentifier)"])
                return
            }
            // The connections may have gone, or acknowledged more, while the ledger was read.
            guard groups[key]?.generation == generation else { return }
            var sent = 0
            var outOfRoom = false
            // Per connection, for the history's notices: one batch each, as with a single one.
            var batches = [[OwedDelivery]](repeating: [], count: groups[key]!.instances.count)
            for delivery in owed {
                if groups[key]!.mayGoOut(delivery) {
                    guard let index = groups[key]!.roomiest(window: window) else {
                        outOfRoom = true
                        break
                    }
                    let connection = groups[key]!.instances[index].connection
                    connection.send(.openURL(delivery.event))
                    activity?.sent(bundleIdentifier, deliveryID: delivery.event.deliveryID)
                    let name = Self.originalName(of: delivery.event)
                    logSent(delivery.event, as: "openURL", name: name, bundleIdentifier: bundleIdentifier)
                    groups[key]!.instances[index].inFlight[delivery.event.deliveryID] = InFlight(sequence: delivery.sequence, originalName: name)
                    batches[index].append(delivery)
                    markSent(delivery, in: key)
                    sent += 1
                }
                // Everything up to here went out, is in flight on a connection, or was
                // acknowledged: the next read starts after it.
                groups[key]!.cursor = max(groups[key]!.cursor, delivery.sequence)
            }
            for (index, batch) in batches.enumerated() where !batch.isEmpty {
                noteSent(batch, as: .openURL, on: groups[key]!.instances[index].connection)
            }
            if !outOfRoom && owed.count < limit && !groups[key]!.returned.isEmpty {
                // The read reached the end: whatever was given back and not read is owed no more.
                groups[key]!.returned.removeAll()
                groups[key]!.cursor = max(groups[key]!.cursor, groups[key]!.highestSent)
            }
            groups[key]!.caughtUp = owed.count < limit
            if let started, sent > 0 {
                // The step `dispatch`: the ledger read of what is owed, then the `openURL` lines.
                logger.debug("events sent", metadata: [
                    "bundle-id": "\(bundleIdentifier)", "events": "\(sent)",
                    "steps": "dispatch=\(Self.microseconds(ContinuousClock.now - started))us",
                ])
            }
            if owed.count < limit && groups[key]?.repump != true { return }
        }
    }
}
