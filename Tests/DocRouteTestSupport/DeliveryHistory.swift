import Crypto
import Foundation

/// What a fault test saw, checked against docroute's promises afterwards: every file dropped (its
/// name and SHA-256), every `launch` and `openURL` a subscribed handler received with what the file
/// it named held at that moment, every `ack` it sent, and what was left at the end in the sandbox
/// and in the inbox.
///
/// ``violations()`` lists every broken promise in words; an empty list is a pass. The promises:
/// every dropped document was delivered byte for byte at least once; each document has exactly
/// one delivery id, acknowledged; no announcement named a missing file or one whose bytes are not
/// those of the document it announced; no delivery id or document appeared that was never
/// dropped; each document lies under exactly one real name in a host's sandbox; nothing is left
/// in the inbox, and nothing was quarantined (every document the fault tests drop has a handler).
///
/// In a fleet, each announcement and each sandbox names its host: a delivery whose lease ran out
/// on one host is announced again, under the same id, on another, so a document may lie once in
/// each of several hosts' sandboxes, never twice in one.
public struct DeliveryHistory: Sendable {
    /// A file put in the inbox.
    public struct Drop: Sendable, Hashable {
        public var name: String
        public var sha256: String

        public init(name: String, sha256: String) {
            self.name = name
            self.sha256 = sha256
        }
    }

    /// A `launch` (with a document) or `openURL` a handler received.
    public struct Announcement: Sendable, Hashable {
        public var type: String
        public var deliveryID: String
        /// The path the URL names.
        public var path: String
        /// The annotation's `originalFilename`: the name the document was dropped under.
        public var originalFilename: String
        /// SHA-256 of what `path` held when the message arrived; `nil` if there was no such file.
        public var observedSHA256: String?
        /// The host whose handler instance received it ("" on one host).
        public var host: String

        public init(type: String, deliveryID: String, path: String, originalFilename: String, observedSHA256: String?, host: String = "") {
            self.type = type
            self.deliveryID = deliveryID
            self.path = path
            self.originalFilename = originalFilename
            self.observedSHA256 = observedSHA256
            self.host = host
        }

        /// The announcement a handler's `launch` or `openURL` message makes, with what the file it
        /// names holds now (read at once: the promise is that the file is complete before any
        /// message names it); nil for any other message, and for a plain launch (no delivery).
        public init?(message: [String: Any], host: String = "") {
            guard let type = message["type"] as? String, type == "launch" || type == "openURL",
                  let deliveryID = message["deliveryID"] as? String else { return nil }
            let url: String?
            let annotation: [String: Any]?
            if type == "launch" {
                let options = message["launchOptions"] as? [String: Any]
                url = options?["UIApplicationLaunchOptionsURLKey"] as? String
                annotation = options?["UIApplicationLaunchOptionsAnnotationKey"] as? [String: Any]
            } else {
                url = message["url"] as? String
                annotation = message["annotation"] as? [String: Any]
            }
            let path = url.flatMap { URL(string: $0)?.path } ?? ""
            self.init(type: type, deliveryID: deliveryID, path: path,
                      originalFilename: annotation?["originalFilename"] as? String ?? "",
                      observedSHA256: path.isEmpty ? nil : DeliveryHistory.sha256(ofFileAt: path), host: host)
        }
    }

    public private(set) var drops: [Drop] = []
    public private(set) var announcements: [Announcement] = []
    /// Delivery ids acknowledged, in order, each time one was sent.
    public private(set) var acks: [String] = []
    /// Each host's sandbox at the end ("" on one host): its real (not hidden) names, with the
    /// SHA-256 of each.
    public var sandboxes: [String: [String: String]] = [:]
    /// The one host's sandbox at the end: its real (not hidden) names, with the SHA-256 of each.
    public var sandbox: [String: String] {
        get { sandboxes[""] ?? [:] }
        set { sandboxes[""] = newValue }
    }
    /// Files left in the inbox at the end (paths relative to it).
    public var leftInInbox: [String] = []
    /// Files quarantined by the end (paths relative to the quarantine folder), each with its reason.
    public var quarantined: [String: String] = [:]
    /// Messages that were neither `launch`, `openURL` nor `subscribed` (errors, say): kept to explain a failure.
    public private(set) var otherMessages: [String] = []

    public init() {}

    public mutating func dropped(_ name: String, bytes: [UInt8]) {
        drops.append(Drop(name: name, sha256: Self.sha256(bytes)))
    }

    /// A file dropped whose digest the test computed itself (one too large to hold in memory).
    public mutating func dropped(_ name: String, sha256: String) {
        drops.append(Drop(name: name, sha256: sha256))
    }

    public mutating func announced(_ announcement: Announcement) {
        announcements.append(announcement)
    }

    public mutating func acknowledged(_ deliveryID: String) {
        acks.append(deliveryID)
    }

    public mutating func noted(_ message: String) {
        otherMessages.append(message)
    }

    /// Lowercase hexadecimal SHA-256.
    public static func sha256(_ bytes: some DataProtocol) -> String {
        SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
    }

    /// SHA-256 of the file at `path` now, or `nil` if it cannot be read; read 1 MiB at a time, so
    /// a document of gigabytes is never whole in the test's memory.
    public static func sha256(ofFileAt path: String) -> String? {
        guard let file = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? file.close() }
        var hash = SHA256()
        while true {
            let block: Data?
            do {
                block = try file.read(upToCount: 1 << 20)
            } catch {
                return nil
            }
            // Foundation says the end with nil or with no bytes.
            guard let block, !block.isEmpty else { break }
            hash.update(data: block)
        }
        return hash.finalize().map { String(format: "%02x", $0) }.joined()
    }

    /// Every promise broken, in words; empty when the history is sound.
    public func violations() -> [String] {
        var problems: [String] = []
        var dropsByName: [String: Drop] = [:]
        for drop in drops {
            if let earlier = dropsByName[drop.name], earlier != drop {
                problems.append("\(drop.name) was dropped twice with different bytes: the history cannot tell the two apart")
            }
            dropsByName[drop.name] = drop
        }
        let documents = Set(drops.map(\.sha256))

        // What each announcement named.
        var documentOfDelivery: [String: String] = [:]
        var deliveriesOfDocument: [String: Set<String>] = [:]
        var deliveredIntact: Set<String> = []
        for announcement in announcements {
            guard let drop = dropsByName[announcement.originalFilename] else {
                problems.append("\(announcement.type) \(announcement.deliveryID) names \(announcement.originalFilename), which was never dropped (an invented delivery)")
                continue
            }
            if let observed = announcement.observedSHA256 {
                if observed == drop.sha256 {
                    deliveredIntact.insert(drop.name)
                } else {
                    problems.append("\(announcement.type) \(announcement.deliveryID) named \(announcement.path), which did not hold \(drop.name)'s bytes (incomplete or another file)")
                }
            } else {
                problems.append("\(announcement.type) \(announcement.deliveryID) named \(announcement.path), which did not exist")
            }
            if let other = documentOfDelivery[announcement.deliveryID], other != drop.name {
                problems.append("delivery \(announcement.deliveryID) named both \(other) and \(drop.name)")
            }
            documentOfDelivery[announcement.deliveryID] = drop.name
            deliveriesOfDocument[drop.name, default: []].insert(announcement.deliveryID)
        }

        let acknowledged = Set(acks)
        for deliveryID in acknowledged where documentOfDelivery[deliveryID] == nil {
            problems.append("acknowledged \(deliveryID), which no announcement named")
        }
        for drop in drops.map(\.name).uniqued() {
            if !deliveredIntact.contains(drop) {
                problems.append("\(drop) was never announced with its bytes (lost)")
            }
            let ids = deliveriesOfDocument[drop] ?? []
            if ids.count > 1 {
                problems.append("\(drop) was delivered \(ids.count) times, as \(ids.sorted().joined(separator: ", ")) (a duplicate)")
            }
            let acknowledgedIDs = ids.intersection(acknowledged)
            if !ids.isEmpty && acknowledgedIDs.count != 1 {
                problems.append("\(drop) has \(acknowledgedIDs.count) acknowledged deliveries, not one")
            }
        }

        // What is on disk at the end, host by host.
        for (host, sandbox) in sandboxes.sorted(by: { $0.key < $1.key }) {
            let which = host.isEmpty ? "the sandbox" : "\(host)'s sandbox"
            var copies: [String: [String]] = [:]
            for (name, digest) in sandbox.sorted(by: { $0.key < $1.key }) {
                if documents.contains(digest) {
                    copies[digest, default: []].append(name)
                } else {
                    problems.append("\(which) holds \(name), whose bytes are no dropped document's (incomplete or invented)")
                }
            }
            for (digest, names) in copies.sorted(by: { $0.key < $1.key }) where names.count > 1 {
                problems.append("\(which) holds one document \(names.count) times: \(names.joined(separator: ", ")) (\(digest.prefix(12)))")
            }
        }
        for (name, reason) in quarantined.sorted(by: { $0.key < $1.key }) {
            problems.append("quarantined: \(name) (\(reason))")
        }
        if !leftInInbox.isEmpty {
            problems.append("left in the inbox: \(leftInInbox.sorted().joined(separator: ", "))")
        }
        return problems
    }

    /// A short account for a failure message.
    public var summary: String {
        "\(drops.count) dropped, \(announcements.count) announced (\(Set(announcements.map(\.deliveryID)).count) ids), "
            + "\(acks.count) acks, \(sandboxes.values.map(\.count).reduce(0, +)) in the sandboxes, \(leftInInbox.count) left in the inbox, \(quarantined.count) quarantined"
            + (otherMessages.isEmpty ? "" : "; other messages: \(otherMessages.prefix(5))")
    }
}

extension Sequence where Element: Hashable {
    fileprivate func uniqued() -> [Element] {
        var seen: Set<Element> = []
        return filter { seen.insert($0).inserted }
    }
}
