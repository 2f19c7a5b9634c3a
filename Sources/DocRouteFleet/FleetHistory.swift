import Foundation

/// One delivery's story as the fleet's database keeps it (``FleetQueue/history(_:including:)``):
/// the document and the delivery as committed, the delivery's state now, and the events every
/// host recorded of it (`history_events`), oldest first.
package struct FleetHistory: Sendable, Hashable {
    /// One row of `history_events`.
    package struct Event: Sendable, Hashable {
        /// The host that recorded it.
        package var host: String
        /// `committed` (intake, with what intake knew), `sourceReclaimed`, `claimed`,
        /// `leaseExpired`, `released`, `launched` (the host took the launch of the handler the
        /// delivery waited for), `written`, `notified`, `acknowledged`, `declined`.
        package var event: String
        package var at: Date
        /// The event's `detail`, a JSON object, as text.
        package var detailJSON: String
    }

    package var deliveryID: UUID
    package var documentID: UUID?
    package var name: String?
    package var intakeHost: String?
    package var size: Int64?
    package var typeIdentifier: String?
    package var bundleIdentifier: String
    package var mailbox: String
    /// `owed`, `claimed`, `acknowledged` or `failed`.
    package var state: String
    /// Whether its acknowledgement was handled (false: declined); nil while it is not ended.
    package var handled: Bool?
    package var claimedBy: String?
    package var committedAt: Date
    package var acknowledgedAt: Date?
    package var events: [Event] = []

    package init(deliveryID: UUID, bundleIdentifier: String, mailbox: String, state: String, committedAt: Date) {
        self.deliveryID = deliveryID
        self.bundleIdentifier = bundleIdentifier
        self.mailbox = mailbox
        self.state = state
        self.committedAt = committedAt
    }
}

/// Which deliveries ``FleetQueue/history(_:including:)`` returns: those matching every condition
/// given (the local ledger's ``HistoryQuery`` as the fleet's tables can answer it).
package struct FleetHistoryQuery: Sendable, Hashable {
    package var deliveryID: UUID?
    /// The document's name as it arrived.
    package var name: String?
    /// A path it had: its source in an inbox, or a copy in a sandbox, as recorded by the events.
    package var path: String?
    package var bundleIdentifier: String?
    /// Committed at or after.
    package var since: Date?
    /// Committed before.
    package var until: Date?
    /// The states (`owed`, `claimed`, `acknowledged`) and whether handled (for `declined`).
    package var states: [String]?
    package var handled: Bool?
    package var limit: Int

    package init(deliveryID: UUID? = nil, name: String? = nil, path: String? = nil, bundleIdentifier: String? = nil,
                 since: Date? = nil, until: Date? = nil, states: [String]? = nil, handled: Bool? = nil, limit: Int = 100) {
        self.deliveryID = deliveryID
        self.name = name
        self.path = path
        self.bundleIdentifier = bundleIdentifier
        self.since = since
        self.until = until
        self.states = states
        self.handled = handled
        self.limit = max(1, limit)
    }
}
