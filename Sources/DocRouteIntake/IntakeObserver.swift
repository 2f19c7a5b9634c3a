/// What intake reports as it works: the counts and events behind `status`, the metrics and the
/// progress lines. DocRouteOperations' `DaemonActivity` conforms; intake knows nothing of it.
package protocol IntakeObserver: Sendable {
    /// An arrival joined the queue.
    func queued(_ arrival: ArrivalQueue.Arrival)
    /// Arrivals left the queue for good (delivered, quarantined, vanished), not to be tried again.
    func settled(_ arrivals: [ArrivalQueue.Arrival])
    /// The inboxes were listed again, and why.
    func rescanned(_ reason: RescanReason)
    /// A batch's outcomes, one for each delivery; `arrivals` as many, for the inbox counts.
    func delivered(_ deliveries: [DocumentDelivery], _ outcomes: [DocumentDeliveryOutcome], arrivals: [ArrivalQueue.Arrival])
    /// A package's outcome.
    func packageDelivered(_ bundleIdentifier: String, _ outcome: DocumentDeliveryOutcome, arrival: ArrivalQueue.Arrival)
    /// A file of inbox `inbox` was quarantined.
    func quarantined(inbox: Int, reason: String, arrival: ArrivalQueue.Arrival?)
    /// Inbox `inbox` watches `count` folders (mailboxes and the folders inside them), and does not
    /// serve `notServed` more because of `max_mailboxes`.
    func foldersWatched(inbox: Int, count: Int, notServed: Int)
    /// A Maildir message of inbox `inbox` could not be read at all.
    func unreadableMessage(inbox: Int)
}
