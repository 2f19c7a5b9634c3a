import Foundation

/// One document's story, from the ledger (``HistoryLedger/history(_:)``): what it was, where it
/// went, and its events in order.
package struct DocumentHistory: Sendable, Hashable {
    /// Where a document is now.
    package enum State: String, Sendable, Hashable, CaseIterable {
        /// Copied, not yet committed (only a crash leaves one for long).
        case staged
        /// Committed: its handler is owed it (sent or not) until it acknowledges.
        case owed
        case acknowledged
        case declined
        /// Moved to the quarantine folder.
        case quarantined
        /// A mail part no handler took: still in its message.
        case skipped
    }

    /// One event of the story.
    package struct Event: Sendable, Hashable {
        package enum Kind: String, Sendable, Hashable {
            case seen, typed, routed, quarantined, skipped, committed, notified, acknowledged, declined, redelivered, sourceReclaimed
            /// In a fleet: a host claimed the delivery, a host's lease on it ran out, a host gave
            /// it back unacknowledged (its handler left, or the copy failed), a host wrote the copy
            /// into its sandbox, a host launched the handler the delivery waited for (its handler
            /// was subscribed on no live host).
            case claimed, leaseExpired, released, written, launched
        }

        package var kind: Kind
        /// When; nil when the ledger did not keep the time (typed and routed happen as it is seen).
        package var at: Date?
        /// What a person reads, in order (`name`, `size`, `handler`, `path`…).
        package var details: [Detail]
        /// In a fleet, the host it happened on when that is not the host asked; nil for this host.
        package var host: String?

        package struct Detail: Sendable, Hashable {
            package var name: String
            package var value: String

            package init(name: String, value: String) {
                self.name = name
                self.value = value
            }
        }

        package init(kind: Kind, at: Date?, details: [Detail], host: String? = nil) {
            self.kind = kind
            self.at = at
            self.details = details
            self.host = host
        }
    }

    /// The delivery id; nil for a document that never became a delivery.
    package var deliveryID: UUID?
    package var state: State
    /// A URL delivery's URL (then nothing was seen in an inbox).
    package var url: String?
    package var originalName: String?
    package var inbox: String?
    package var sourcePath: String?
    package var mailbox: String?
    package var size: Int64?
    /// The Uniform Type Identifier it was typed as.
    package var contentType: String?
    package var mimeType: String?
    /// How the type was decided: `extension`, `content`, `mime` or `dynamic`.
    package var typedBy: String?
    package var bundleIdentifier: String?
    /// Why it went to that handler.
    package var routedBy: String?
    /// Its copy in the sandbox.
    package var finalPath: String?
    package var messageID: String?
    package var partPath: String?
    /// Why it was quarantined or skipped.
    package var reason: String?
    package var quarantinePath: String?
    package var seenAt: Date?
    package var committedAt: Date?
    package var notifiedAt: Date?
    /// `launch` or `openURL`.
    package var notifiedBy: String?
    /// The connection told (its number, the peer's pid and uid).
    package var notifiedTo: String?
    /// When it was acknowledged or declined.
    package var settledAt: Date?
    package var sourceRemovedAt: Date?
    /// The rounds before its last redelivery, oldest first: each told, settled, then sent again.
    package var earlierRounds: [Round] = []
    /// The events as given, instead of those the fields tell: a fleet's story merged with this
    /// host's (``DocumentHistory/events``), or events read back from a reply's JSON.
    package var givenEvents: [Event]?

    /// One round of a document that was sent to its handler again (`docroutectl redeliver`):
    /// who was told, how it was settled, and when it was sent again.
    package struct Round: Sendable, Hashable {
        package var notifiedAt: Date?
        package var notifiedBy: String?
        package var notifiedTo: String?
        /// `acknowledged` or `declined`.
        package var settled: State
        package var settledAt: Date?
        package var redeliveredAt: Date

        package init(notifiedAt: Date? = nil, notifiedBy: String? = nil, notifiedTo: String? = nil, settled: State,
                     settledAt: Date?, redeliveredAt: Date) {
            self.notifiedAt = notifiedAt
            self.notifiedBy = notifiedBy
            self.notifiedTo = notifiedTo
            self.settled = settled
            self.settledAt = settledAt
            self.redeliveredAt = redeliveredAt
        }
    }

    package init(deliveryID: UUID?, state: State) {
        self.deliveryID = deliveryID
        self.state = state
    }

    /// When it was first seen (what the newest-first order of a query goes by).
    package var firstAt: Date? { seenAt ?? committedAt }

    /// Its events, in the order they happened: ``givenEvents`` when set, else those its fields tell.
    package var events: [Event] { givenEvents ?? ledgerEvents }

    /// The events this host's ledger tells of it, in the order they happened.
    package var ledgerEvents: [Event] {
        var events: [Event] = []
        func add(_ kind: Event.Kind, _ at: Date?, _ details: [(String, String?)]) {
            events.append(Event(kind: kind, at: at, details: details.compactMap { name, value in
                value.map { Event.Detail(name: name, value: $0) }
            }))
        }
        if url == nil {
            // A mail part's source is its message: the scratch file it was decoded into is
            // docrouted's own, and says nothing to whoever looks for the part.
            let mailPart = messageID != nil
            add(.seen, seenAt, [(mailPart ? "mail" : "inbox", inbox), ("mailbox", mailbox), ("name", originalName),
                                ("path", mailPart ? nil : sourcePath),
                                ("size", size.map(String.init)), ("message", messageID), ("part", partPath)])
            if contentType != nil || mimeType != nil {
                add(.typed, nil, [("type", contentType), ("mime", mimeType), ("by", typedBy)])
            }
        } else {
            add(.seen, seenAt, [("url", url)])
        }
        switch state {
        case .quarantined:
            add(.quarantined, seenAt, [("reason", reason), ("path", quarantinePath)])
            return events
        case .skipped:
            add(.skipped, seenAt, [("reason", reason)])
            return events
        default:
            break
        }
        add(.routed, nil, [("handler", bundleIdentifier), ("why", routedBy)])
        if let committedAt {
            add(.committed, committedAt, [("path", finalPath)])
        }
        for round in earlierRounds {
            if let at = round.notifiedAt {
                add(.notified, at, [("by", round.notifiedBy), ("to", round.notifiedTo)])
            }
            if let at = round.settledAt {
                add(round.settled == .declined ? .declined : .acknowledged, at, [])
            }
            add(.redelivered, round.redeliveredAt, [("path", finalPath)])
        }
        if let notifiedAt {
            add(.notified, notifiedAt, [("by", notifiedBy), ("to", notifiedTo)])
        }
        if let settledAt {
            add(state == .declined ? .declined : .acknowledged, settledAt, [])
        }
        if let sourceRemovedAt, url == nil, sourcePath != nil, messageID == nil {
            add(.sourceReclaimed, sourceRemovedAt, [])
        }
        return Self.inTimeOrder(events)
    }

    /// `events` in time order: the source is usually freed before the handler answers. An event
    /// without a time stays after the one before it (typed and routed with seen); events of one
    /// moment keep their order.
    package static func inTimeOrder(_ events: [Event]) -> [Event] {
        var last = Date.distantPast
        let keyed = events.enumerated().map { index, event in
            last = event.at ?? last
            return (last, index, event)
        }
        return keyed.sorted { ($0.0, $0.1) < ($1.0, $1.1) }.map(\.2)
    }
}
