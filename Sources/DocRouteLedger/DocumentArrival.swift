import Foundation

/// How a document came in, for its history: written with its delivery row at stage.
package struct DocumentArrival: Sendable, Hashable {
    /// When intake saw it (opened, typed and routed it).
    package var seenAt: Date
    /// Its inbox (for a mail part, the message).
    package var inbox: String?
    package var mimeType: String?
    /// How its type was decided (`extension`, `content`, `mime`, `dynamic`).
    package var typedBy: String?
    /// Why it goes to its handler.
    package var routedBy: String?

    package init(seenAt: Date, inbox: String? = nil, mimeType: String? = nil, typedBy: String? = nil, routedBy: String? = nil) {
        self.seenAt = seenAt
        self.inbox = inbox
        self.mimeType = mimeType
        self.typedBy = typedBy
        self.routedBy = routedBy
    }
}
