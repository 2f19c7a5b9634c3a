import DocRouteProtocol

/// What `redeliver` did with one delivery id (``LedgerBackend/redeliver(_:declinedOf:)``).
package struct Redelivery: Sendable, Hashable {
    package enum Outcome: String, Sendable, Hashable {
        /// Owed again: its handler is sent it as a new event, naming the same copy.
        case redelivered
        /// Its copy is no longer in the sandbox (the handler or retention removed it).
        case copyGone = "copy-gone"
        /// Not acknowledged or declined yet: it is still owed, nothing to send again.
        case notSettled = "not-settled"
        /// No delivery has that id (or its history was pruned).
        case unknown
        /// A URL delivery: there is no copy to name; `open` it again instead.
        case url
    }

    package var deliveryID: String
    package var outcome: Outcome
    package var bundleIdentifier: String?
    package var path: String?
    /// What happened, in words, with what to do when it was not sent.
    package var message: String

    /// The result as the `redelivered` reply's `results` carry it.
    package var json: JSONValue {
        var object: [String: JSONValue] = [
            "deliveryID": .string(deliveryID), "outcome": .string(outcome.rawValue), "message": .string(message),
        ]
        if let bundleIdentifier { object["bundleIdentifier"] = .string(bundleIdentifier) }
        if let path { object["path"] = .string(path) }
        return .object(object)
    }
}
