import Foundation

/// A document that never became a delivery, for its history (``HistoryLedger/noteUndelivered(_:)``).
package struct UndeliveredDocument: Sendable, Hashable {
    /// What happened to it.
    package enum Outcome: String, Sendable, Hashable, CaseIterable {
        /// Moved to the quarantine folder (no handler, or it could not be delivered).
        case quarantined
        /// A mail part no handler claims (or one left out on purpose): the message keeps it.
        case skipped
    }

    package var outcome: Outcome
    package var at: Date
    /// Its inbox (or, for a mail part, the Maildir).
    package var inbox: String?
    /// Its path when seen.
    package var sourcePath: String?
    package var originalName: String?
    package var mailbox: String?
    package var size: Int64?
    /// Its Uniform Type Identifier, when it was typed.
    package var contentType: String?
    /// Why: the reason a person reads.
    package var reason: String
    /// Where the quarantine keeps it.
    package var quarantinePath: String?
    /// For a mail part: the message's Message-ID and the part's path.
    package var messageID: String?
    package var partPath: String?

    package init(outcome: Outcome, at: Date = Date(), inbox: String? = nil, sourcePath: String? = nil, originalName: String? = nil,
                 mailbox: String? = nil, size: Int64? = nil, contentType: String? = nil, reason: String,
                 quarantinePath: String? = nil, messageID: String? = nil, partPath: String? = nil) {
        self.outcome = outcome
        self.at = at
        self.inbox = inbox
        self.sourcePath = sourcePath
        self.originalName = originalName
        self.mailbox = mailbox
        self.size = size
        self.contentType = contentType
        self.reason = reason
        self.quarantinePath = quarantinePath
        self.messageID = messageID
        self.partPath = partPath
    }
}
