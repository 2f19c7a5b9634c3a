/// What dispatch and launching report: the per-handler counts and states behind `status` and the
/// metrics. DocRouteOperations' `DaemonActivity` conforms; the server knows nothing of it.
package protocol DispatchObserver: Sendable {
    /// A handler subscribed; `pending` deliveries are owed to it.
    func subscribed(_ handler: String, pending: Int)
    /// An `openURL` went out for a delivery.
    func sent(_ handler: String, deliveryID: String)
    /// The handler acknowledged a delivery (`handled` false: it declined it); `originalName` is
    /// the document's name as it came, for `status`'s `lastError` of a decline.
    func acknowledged(_ handler: String, deliveryID: String, handled: Bool, originalName: String)
    /// A connection of the handler ended with these deliveries sent and not acknowledged;
    /// `stillSubscribed` when other competing connections of the handler remain, which get them.
    func disconnected(_ handler: String, deliveryIDs: [String], stillSubscribed: Bool)
    /// Telling or launching the handler failed, and why.
    func failed(_ handler: String, _ message: String)
}
