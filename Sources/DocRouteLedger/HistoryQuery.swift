import Foundation

/// Which documents ``HistoryLedger/history(_:)`` returns: those matching every condition given.
package struct HistoryQuery: Sendable, Hashable {
    /// One delivery.
    package var deliveryID: UUID?
    /// The document's own name, as it arrived (`notes.txt`).
    package var name: String?
    /// A path it had: its source in the inbox, or its copy in the sandbox (`…/notes-1.txt`).
    package var path: String?
    /// The handler it went to.
    package var bundleIdentifier: String?
    /// Seen at or after.
    package var since: Date?
    /// Seen before.
    package var until: Date?
    /// Where it is now.
    package var state: DocumentHistory.State?
    /// The most documents returned.
    package var limit: Int

    package init(deliveryID: UUID? = nil, name: String? = nil, path: String? = nil, bundleIdentifier: String? = nil,
                 since: Date? = nil, until: Date? = nil, state: DocumentHistory.State? = nil, limit: Int = 100) {
        self.deliveryID = deliveryID
        self.name = name
        self.path = path
        self.bundleIdentifier = bundleIdentifier
        self.since = since
        self.until = until
        self.state = state
        self.limit = max(1, limit)
    }
}
