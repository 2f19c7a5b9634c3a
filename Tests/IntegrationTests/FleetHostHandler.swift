import DocRouteTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One host's instance of a handler in a fleet test, on a thread of its own: it subscribes on that
/// host's socket (again whenever the connection ends), reads every file a `launch` or `openURL`
/// names the moment the message arrives, and records it under the host's name. It acknowledges
/// each at once, or, while ``holding``, keeps the acknowledgements back until ``release()``: a
/// handler that has its documents and has not said so yet.
///
/// The test gathers what every host's instance saw into one ``DeliveryHistory``
/// (``record(into:)``), with each host's sandbox (``noteSandbox(_:into:)``).
final class FleetHostHandler: @unchecked Sendable {
    let socket: String
    let bundleIdentifier: String
    let host: String
    private let lock = NSLock()
    private var announcements: [DeliveryHistory.Announcement] = []
    /// When each delivery id was first received.
    private var firstArrivals: [String: Date] = [:]
    private var acks: [String] = []
    private var others: [String] = []
    /// Delivery ids received and not acknowledged yet, in arrival order.
    private var unacknowledged: [String] = []
    private var holding: Bool
    private var stopping = false
    private var finished = true
    private var subscriptions = 0

    init(socket: String, bundleIdentifier: String, host: String, holding: Bool = false) {
        self.socket = socket
        self.bundleIdentifier = bundleIdentifier
        self.host = host
        self.holding = holding
    }

    func start() {
        lock.withLock {
            stopping = false
            finished = false
        }
        let thread = Thread { [self] in
            run()
            lock.withLock { finished = true }
        }
        thread.start()
    }

    /// Closes the connection (the handler leaves the host) and stops the thread.
    func stop() {
        lock.withLock { stopping = true }
        while !lock.withLock({ finished }) { usleep(10_000) }
    }

    /// Acknowledges everything held back, and everything from now on at once.
    func release() {
        lock.withLock { holding = false }
    }

    /// How many times a subscription was answered.
    var subscriptionCount: Int { lock.withLock { subscriptions } }

    /// Every `launch` or `openURL` received so far, in order.
    var received: [DeliveryHistory.Announcement] { lock.withLock { announcements } }

    /// When each delivery id was first received, by id as the daemon spelled it.
    var arrivals: [String: Date] { lock.withLock { firstArrivals } }

    /// Delivery ids acknowledged so far, in order.
    var acknowledged: [String] { lock.withLock { acks } }

    /// Delivery ids received and not acknowledged yet.
    var held: [String] { lock.withLock { unacknowledged } }

    /// Adds what this instance received and acknowledged to `history`.
    func record(into history: inout DeliveryHistory) {
        let (announcements, acks, others) = lock.withLock { (self.announcements, self.acks, self.others) }
        for announcement in announcements { history.announced(announcement) }
        for ack in acks { history.acknowledged(ack) }
        for other in others { history.noted("\(host): \(other)") }
    }

    /// Records the real names of `sandbox` with their digests as this host's sandbox in `history`.
    func noteSandbox(_ sandbox: String, into history: inout DeliveryHistory) {
        var found: [String: String] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: sandbox)) ?? [] where !name.hasPrefix(".") {
            found[name] = DeliveryHistory.sha256(ofFileAt: sandbox + "/" + name) ?? "unreadable"
        }
        history.sandboxes[host] = found
    }

    /// A short account for a failure message.
    var summary: String {
        lock.withLock {
            "\(host): \(subscriptions) subscription(s), \(announcements.count) announced (\(Set(announcements.map(\.deliveryID)).count) ids), "
                + "\(acks.count) acks, \(unacknowledged.count) held" + (others.isEmpty ? "" : "; other messages: \(others.prefix(5))")
        }
    }

    private var isStopping: Bool { lock.withLock { stopping } }

    private func run() {
        LineClient.reconnecting(to: socket, timeout: 0.2, until: { isStopping }) { serve($0) }
    }

    private func serve(_ client: LineClient) {
        do {
            try client.send(["type": "subscribe", "id": "fleet-\(host)", "bundleIdentifier": bundleIdentifier])
        } catch {
            return
        }
        while !isStopping {
            guard sendReleasedAcknowledgements(client) else { return }
            guard let text = client.readLineText() else {
                // A timeout, or the daemon went away.
                if client.isClosedByPeer { return }
                continue
            }
            guard let data = text.data(using: .utf8),
                  let message = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
                  let type = message["type"] as? String else {
                lock.withLock { others.append(text) }
                continue
            }
            switch type {
            case "subscribed":
                lock.withLock { subscriptions += 1 }
            case "launch", "openURL":
                guard let announcement = DeliveryHistory.Announcement(message: message, host: host) else { continue } // a plain launch
                let deliveryID = announcement.deliveryID
                let now = Date()
                lock.withLock {
                    if firstArrivals[deliveryID] == nil { firstArrivals[deliveryID] = now }
                    announcements.append(announcement)
                    if !unacknowledged.contains(deliveryID) { unacknowledged.append(deliveryID) }
                }
            default:
                lock.withLock { others.append(text) }
            }
        }
    }

    /// Sends an `ack` for each delivery received and not acknowledged, unless holding; false when
    /// the connection failed.
    private func sendReleasedAcknowledgements(_ client: LineClient) -> Bool {
        let due = lock.withLock { holding ? [] : unacknowledged }
        for deliveryID in due {
            do {
                try client.send(["type": "ack", "deliveryID": deliveryID, "handled": true])
            } catch {
                return false
            }
            lock.withLock {
                acks.append(deliveryID)
                unacknowledged.removeAll { $0 == deliveryID }
            }
        }
        return true
    }
}
