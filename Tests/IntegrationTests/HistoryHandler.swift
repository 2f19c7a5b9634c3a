import DocRouteTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A handler that stays subscribed through a whole fault test, on a thread of its own: it connects
/// again whenever the daemon is gone and back, reads every file a `launch` or `openURL` names the
/// moment the message arrives, records it in a ``DeliveryHistory``, and acknowledges it, as a real
/// handler would (again each time a delivery is sent again).
final class HistoryHandler: @unchecked Sendable {
    let socket: String
    let bundleIdentifier: String
    /// Subscribes as one of the handler's competing connections.
    let compete: Bool
    /// How long each document takes before its acknowledgement.
    let pause: TimeInterval
    /// False for an instance that hangs: it reads each document and never acknowledges it.
    let acknowledges: Bool
    private let lock = NSLock()
    private var history = DeliveryHistory()
    private var stopping = false
    private var finished = false
    private var subscriptions = 0

    init(socket: String, bundleIdentifier: String, compete: Bool = false, pause: TimeInterval = 0, acknowledges: Bool = true) {
        self.socket = socket
        self.bundleIdentifier = bundleIdentifier
        self.compete = compete
        self.pause = pause
        self.acknowledges = acknowledges
    }

    func start() {
        let thread = Thread { [self] in
            run()
            lock.withLock { finished = true }
        }
        thread.start()
    }

    /// Stops the thread and returns the history so far.
    func stop() -> DeliveryHistory {
        lock.withLock { stopping = true }
        while !lock.withLock({ finished }) { usleep(10_000) }
        return snapshot
    }

    var snapshot: DeliveryHistory { lock.withLock { history } }

    /// How many times a subscription was answered.
    var subscriptionCount: Int { lock.withLock { subscriptions } }

    /// Records a file the test drops (call it before or after the drop: only the end is checked).
    func dropped(_ name: String, bytes: [UInt8]) {
        lock.withLock { history.dropped(name, bytes: bytes) }
    }

    /// Notes the end state: the sandbox's real names with their digests, what the inbox holds, and
    /// what was quarantined (with the first line of each reason).
    func noteEnd(sandbox: String, inbox: String, quarantine: String) {
        var found: [String: String] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: sandbox)) ?? [] where !name.hasPrefix(".") {
            found[name] = DeliveryHistory.sha256(ofFileAt: sandbox + "/" + name) ?? "unreadable"
        }
        var left: [String] = []
        if let walker = FileManager.default.enumerator(atPath: inbox) {
            while let entry = walker.nextObject() as? String {
                var info = stat()
                if lstat(inbox + "/" + entry, &info) == 0, (info.st_mode & S_IFMT) != S_IFDIR { left.append(entry) }
            }
        }
        var quarantined: [String: String] = [:]
        if let walker = FileManager.default.enumerator(atPath: quarantine) {
            while let entry = walker.nextObject() as? String {
                var info = stat()
                guard !entry.hasSuffix(".reason"), lstat(quarantine + "/" + entry, &info) == 0, (info.st_mode & S_IFMT) != S_IFDIR else { continue }
                let reason = (try? String(contentsOfFile: quarantine + "/" + entry + ".reason", encoding: .utf8)) ?? "no reason file"
                quarantined[entry] = String(reason.prefix { $0 != "\n" })
            }
        }
        lock.withLock {
            history.sandbox = found
            history.leftInInbox = left
            history.quarantined = quarantined
        }
    }

    /// Whether every document dropped so far was announced intact and acknowledged.
    var everyDropAcknowledged: Bool {
        let history = snapshot
        let acknowledged = Set(history.acks)
        let acknowledgedNames = Set(history.announcements.filter { acknowledged.contains($0.deliveryID) }.map(\.originalFilename))
        return history.drops.allSatisfy { acknowledgedNames.contains($0.name) }
    }

    private var isStopping: Bool { lock.withLock { stopping } }

    private func run() {
        LineClient.reconnecting(to: socket, timeout: 0.2, until: { isStopping }) { serve($0) }
    }

    private func serve(_ client: LineClient) {
        do {
            var subscribe: [String: Any] = ["type": "subscribe", "id": "history", "bundleIdentifier": bundleIdentifier]
            if compete { subscribe["compete"] = true }
            try client.send(subscribe)
        } catch {
            return
        }
        while !isStopping {
            guard let text = client.readLineText() else {
                // A timeout, or the daemon went away.
                if client.isClosedByPeer { return }
                continue
            }
            guard let data = text.data(using: .utf8),
                  let message = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
                  let type = message["type"] as? String else {
                lock.withLock { history.noted(text) }
                continue
            }
            switch type {
            case "subscribed":
                lock.withLock { subscriptions += 1 }
            case "launch", "openURL":
                guard let announcement = DeliveryHistory.Announcement(message: message) else { continue } // a plain launch
                let deliveryID = announcement.deliveryID
                lock.withLock { history.announced(announcement) }
                guard acknowledges else { continue }
                if pause > 0 { usleep(useconds_t(pause * 1_000_000)) }
                do {
                    try client.send(["type": "ack", "deliveryID": deliveryID, "handled": true])
                    lock.withLock { history.acknowledged(deliveryID) }
                } catch {
                    return
                }
            default:
                lock.withLock { history.noted(text) }
            }
        }
    }
}
