import DocRouteHandlers
import Foundation
import DocRouteLedger
import DocRouteProtocol
import Logging

/// Sends each handler what the ledger says it is owed: one `launch` per subscription, then
/// `openURL` in commit order, at most `window` unacknowledged at a time per connection.
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
    struct Subscription {
        var connection: ClientConnection
        /// As the manifest spells it, for ledger queries.
        var bundleIdentifier: String
        /// The highest sequence sent on this connection.
        var lastSent: Int64 = 0
        /// Delivery id to what was sent, not yet acknowledged.
        var inFlight: [String: InFlight] = [:]
        var pumping = false
        var repump = false
        /// Nothing but `subscribed` and then `launch` may go out first: until both are sent, a
        /// commit arriving meanwhile (the actor is re-entered while the ledger is read) waits.
        var launched = false
        /// The last ledger read found fewer owed than there was room for: everything owed was
        /// sent, so a document committed now is worth a read even with less than a refill free.
        var caughtUp = false
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
    var subscriptions: [String: Subscription] = [:]
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
        subscriptions[bundleIdentifier.lowercased()] != nil
    }

    /// Unacknowledged events in flight for a handler.
    package func inFlightCount(_ bundleIdentifier: String) -> Int {
        subscriptions[bundleIdentifier.lowercased()]?.inFlight.count ?? 0
    }

    /// Makes `connection` the handler's live connection: replies `subscribed`, then the `launch`.
    package func subscribe(_ handler: RegisteredHandler, connection: ClientConnection, requestID: String?) async -> ProtocolError? {
        let key = handler.bundleIdentifier.lowercased()
        if let existing = subscriptions[key], existing.connection != connection {
            return ProtocolError(code: .alreadySubscribed, message: "another connection (\(existing.connection.credentials)) is subscribed as \(handler.bundleIdentifier); close it first", requestID: requestID)
        }
        if subscriptions[key] != nil {
            return ProtocolError(code: .alreadySubscribed, message: "this connection is already subscribed as \(handler.bundleIdentifier)", requestID: requestID)
        }
        // One handler per connection: acknowledgements name no handler, so a second subscription
        // on the same connection would make the first one's acks ambiguous.
        if let other = subscriptions.values.first(where: { $0.connection == connection }) {
            return ProtocolError(code: .alreadySubscribed, message: "this connection is subscribed as \(other.bundleIdentifier) already; a connection serves one handler, so open another connection for \(handler.bundleIdentifier)", requestID: requestID)
        }
        subscriptions[key] = Subscription(connection: connection, bundleIdentifier: handler.bundleIdentifier)
        // What an earlier connection acknowledged must not come back as owed.
        await acknowledgementsWritten()
        do {
            let pending = try await store.owedCount(bundleIdentifier: handler.bundleIdentifier)
            let first = try await store.owed(bundleIdentifier: handler.bundleIdentifier, afterSequence: 0, limit: 1).first
            guard subscriptions[key]?.connection == connection else { return nil }
            connection.send(.subscribed(id: requestID, bundleIdentifier: handler.bundleIdentifier, pending: pending))
            if let first {
                connection.send(.launch(first.event))
                noteSent([first], as: .launch, on: connection)
                activity?.sent(handler.bundleIdentifier, deliveryID: first.event.deliveryID)
                let name = Self.originalName(of: first.event)
                logSent(first.event, as: "launch", name: name, bundleIdentifier: handler.bundleIdentifier)
                subscriptions[key]?.lastSent = first.sequence
                subscriptions[key]?.inFlight[first.event.deliveryID] = InFlight(sequence: first.sequence, originalName: name)
            } else {
                connection.send(.plainLaunch)
            }
            subscriptions[key]?.launched = true
            activity?.subscribed(handler.bundleIdentifier, pending: pending)
            logger.info("handler subscribed", metadata: ["bundle-id": "\(handler.bundleIdentifier)", "pending": "\(pending)", "peer": "\(connection.credentials)"])
        } catch {
            subscriptions[key] = nil
            return ProtocolError(code: .internal, message: "the ledger could not be read: \(error)", requestID: requestID)
        }
        await pump(key, bundleIdentifier: handler.bundleIdentifier)
        return nil
    }

    /// A document was committed for a handler: send it if the handler is subscribed and has room.
    package func committed(bundleIdentifier: String) async {
        let key = bundleIdentifier.lowercased()
        guard subscriptions[key] != nil else {
            onUnsubscribedDelivery(bundleIdentifier)
            return
        }
        await pump(key, bundleIdentifier: bundleIdentifier)
    }

    /// An `ack` from `connection`. Only deliveries sent on that connection can be acknowledged.
    package func acknowledge(deliveryID: String, handled: Bool, connection: ClientConnection, requestID: String?) async -> ProtocolError? {
        let started = profiling ? ContinuousClock.now : nil
        // No copy of the subscription is held while its `inFlight` changes: a copy would make the
        // change copy the whole window's dictionary, once per acknowledgement.
        guard let key = subscriptions.first(where: { $0.value.connection == connection })?.key,
              let sent = subscriptions[key]?.inFlight.removeValue(forKey: deliveryID),
              let bundleIdentifier = subscriptions[key]?.bundleIdentifier
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
        await pump(key, bundleIdentifier: bundleIdentifier)
        return nil
    }

    /// The connection closed: its unacknowledged events stay owed and go out on the next subscription.
    package func disconnected(_ connection: ClientConnection) {
        for (key, subscription) in subscriptions where subscription.connection == connection {
            subscriptions[key] = nil
            activity?.disconnected(subscription.bundleIdentifier, deliveryIDs: Array(subscription.inFlight.keys))
            logger.info("handler disconnected", metadata: ["bundle-id": "\(key)", "unacknowledged": "\(subscription.inFlight.count)"])
        }
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

    /// The room in the window and the last sequence sent, when a ledger read is worth it now.
    /// (A function of its own so that its copy of the subscription is gone before the read.)
    private func refill(_ key: String) -> (room: Int, lastSent: Int64)? {
        guard let subscription = subscriptions[key] else { return nil }
        let room = window - subscription.inFlight.count
        // Without `caughtUp`, a window filled one commit at a time could stop one short of full
        // for as long as the handler does not acknowledge.
        guard room > 0, room >= refillSize || subscription.inFlight.isEmpty || subscription.caughtUp else { return nil }
        return (room, subscription.lastSent)
    }

    func pump(_ key: String, bundleIdentifier: String) async {
        // Only the connection is kept across the awaits, never a copy of the subscription: a copy
        // shares the `inFlight` dictionary, and each send below would then copy all of it.
        guard let connection = subscriptions[key]?.connection, subscriptions[key]?.launched == true else { return }
        if subscriptions[key]?.pumping == true {
            // A pump is already reading the ledger; make it look again before it stops.
            subscriptions[key]?.repump = true
            return
        }
        subscriptions[key]?.pumping = true
        defer { if subscriptions[key]?.connection == connection { subscriptions[key]?.pumping = false } }
        while subscriptions[key]?.connection == connection {
            subscriptions[key]?.repump = false
            guard let (room, lastSent) = refill(key) else { return }
            let started = profiling ? ContinuousClock.now : nil
            let owed: [OwedDelivery]
            do {
                owed = try await store.owed(bundleIdentifier: bundleIdentifier, afterSequence: lastSent, limit: room)
            } catch {
                logger.error("the ledger could not be read: \(error)", metadata: ["bundle-id": "\(bundleIdentifier)"])
                return
            }
            // The connection may have gone, or acknowledged more, while the ledger was read.
            guard subscriptions[key]?.connection == connection else { return }
            for delivery in owed where delivery.sequence > subscriptions[key]!.lastSent {
                connection.send(.openURL(delivery.event))
                activity?.sent(bundleIdentifier, deliveryID: delivery.event.deliveryID)
                let name = Self.originalName(of: delivery.event)
                logSent(delivery.event, as: "openURL", name: name, bundleIdentifier: bundleIdentifier)
                subscriptions[key]!.lastSent = delivery.sequence
                subscriptions[key]!.inFlight[delivery.event.deliveryID] = InFlight(sequence: delivery.sequence, originalName: name)
            }
            noteSent(owed, as: .openURL, on: connection)
            subscriptions[key]!.caughtUp = owed.count < room
            if let started, !owed.isEmpty {
                // The step `dispatch`: the ledger read of what is owed, then the `openURL` lines.
                logger.debug("events sent", metadata: [
                    "bundle-id": "\(bundleIdentifier)", "events": "\(owed.count)",
                    "steps": "dispatch=\(Self.microseconds(ContinuousClock.now - started))us",
                ])
            }
            if owed.count < room && subscriptions[key]?.repump != true { return }
        }
    }
}
