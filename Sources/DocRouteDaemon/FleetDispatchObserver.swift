import DocRouteDelivery
import DocRouteServer

/// The dispatch observer of a host in a fleet: everything goes to the daemon's own observer (status
/// and metrics), and what the fleet needs to know to the ``FleetDispatcher``: which handlers are
/// subscribed on this host, what they acknowledged, and when they leave.
struct FleetDispatchObserver: DispatchObserver {
    let inner: any DispatchObserver
    let fleet: FleetDispatcher

    func subscribed(_ handler: String, pending: Int) {
        inner.subscribed(handler, pending: pending)
        fleet.subscribed(handler)
    }

    func sent(_ handler: String, deliveryID: String) {
        inner.sent(handler, deliveryID: deliveryID)
    }

    func acknowledged(_ handler: String, deliveryID: String, handled: Bool, originalName: String) {
        inner.acknowledged(handler, deliveryID: deliveryID, handled: handled, originalName: originalName)
        fleet.acknowledged(deliveryID, handled: handled)
    }

    func disconnected(_ handler: String, deliveryIDs: [String], stillSubscribed: Bool) {
        inner.disconnected(handler, deliveryIDs: deliveryIDs, stillSubscribed: stillSubscribed)
        // While other connections of the handler remain here, what the closed one held goes to
        // them under this host's claims; only the last one gives the claims back.
        if !stillSubscribed { fleet.disconnected(handler) }
    }

    func failed(_ handler: String, _ message: String) {
        inner.failed(handler, message)
    }
}
