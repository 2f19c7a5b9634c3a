import DocRouteFleet
import DocRouteLedger
import DocRouteProtocol
import Foundation

/// A document's whole story in a fleet: this host's ledger's events of a delivery merged with
/// those every host recorded in the fleet's database (``FleetHistory``), each event naming its
/// host when that is not this one.
///
/// The fleet's `committed` event of the intake host carries what intake knew (seen, typed,
/// routed): it replaces the ledger's own `seen`, `typed` and `routed` of a copy claimed from the
/// fleet, which only saw the claiming host's scratch file, and the ledger's `committed` of such a
/// copy is its `written` into the sandbox. Events of this host that the ledger tells already
/// (written, told, acknowledged, declined) are taken from the ledger, not twice.
package enum FleetHistoryMerge {
    /// `local` (this host's ledger's answer) and `fleet` merged, one document per delivery id,
    /// newest first, at most `limit`.
    package static func merge(local: [DocumentHistory], fleet: [FleetHistory], hostName: String, limit: Int) -> [DocumentHistory] {
        let fleetByID = Dictionary(fleet.map { ($0.deliveryID, $0) }, uniquingKeysWith: { first, _ in first })
        var merged: [DocumentHistory] = []
        var seen: Set<UUID> = []
        for history in local {
            guard let id = history.deliveryID, let shared = fleetByID[id] else {
                merged.append(history)
                continue
            }
            seen.insert(id)
            merged.append(merge(history, shared, hostName: hostName))
        }
        for shared in fleet where !seen.contains(shared.deliveryID) {
            merged.append(document(shared, hostName: hostName))
        }
        merged.sort { ($0.firstAt ?? .distantPast) > ($1.firstAt ?? .distantPast) }
        return Array(merged.prefix(limit))
    }

    /// This host's document `history` with the fleet's events of it.
    static func merge(_ history: DocumentHistory, _ shared: FleetHistory, hostName: String) -> DocumentHistory {
        let fromFleet = shared.events.contains { $0.event == "committed" }
        let told: Set<DocumentHistory.Event.Kind> = [.written, .notified, .acknowledged, .declined, .committed]
        var events: [DocumentHistory.Event] = []
        for var event in history.ledgerEvents {
            if fromFleet {
                switch event.kind {
                case .seen, .typed, .routed, .sourceReclaimed: continue
                case .committed: event.kind = .written
                default: break
                }
            }
            events.append(event)
        }
        for event in shared.events {
            for converted in convert(event, hostName: hostName) {
                if converted.host == nil && told.contains(converted.kind) && converted.kind != .committed { continue }
                events.append(converted)
            }
        }
        var merged = history
        merged.givenEvents = DocumentHistory.inTimeOrder(sortedByTime(events))
        // Copied here but acknowledged on another host (this host's lease ran out): the fleet
        // knows it ended, this host's ledger only that it was owed.
        if history.state == .owed || history.state == .staged, shared.state == "acknowledged" {
            merged.state = state(of: shared)
            merged.settledAt = shared.acknowledgedAt
        }
        if fromFleet, let committed = shared.events.first(where: { $0.event == "committed" }) {
            let detail = details(committed.detailJSON)
            merged.seenAt = detail["seenAt"].flatMap(DocumentHistory.date(timestamp:)) ?? committed.at
            merged.inbox = detail["inbox"]
            merged.sourcePath = detail["path"]
        }
        return merged
    }

    /// A document only the fleet knows (it came in here or elsewhere, and was not delivered here).
    static func document(_ shared: FleetHistory, hostName: String) -> DocumentHistory {
        var history = DocumentHistory(deliveryID: shared.deliveryID, state: state(of: shared))
        history.originalName = shared.name
        history.size = shared.size
        history.contentType = shared.typeIdentifier
        history.bundleIdentifier = shared.bundleIdentifier
        history.mailbox = shared.mailbox
        history.committedAt = shared.committedAt
        history.settledAt = shared.acknowledgedAt
        if let committed = shared.events.first(where: { $0.event == "committed" }) {
            let detail = details(committed.detailJSON)
            history.seenAt = detail["seenAt"].flatMap(DocumentHistory.date(timestamp:)) ?? committed.at
            history.inbox = detail["inbox"]
            history.sourcePath = detail["path"]
            history.mimeType = detail["mime"]
            history.typedBy = detail["typedBy"]
            history.routedBy = detail["why"]
        } else {
            history.seenAt = shared.committedAt
        }
        history.finalPath = shared.events.last(where: { $0.event == "written" }).flatMap { details($0.detailJSON)["path"] }
        var events: [DocumentHistory.Event] = []
        for event in shared.events { events += convert(event, hostName: hostName) }
        history.givenEvents = DocumentHistory.inTimeOrder(sortedByTime(events))
        return history
    }

    /// The delivery's state as `history` names it.
    static func state(of shared: FleetHistory) -> DocumentHistory.State {
        switch shared.state {
        case "acknowledged": shared.handled == false ? .declined : .acknowledged
        default: .owed
        }
    }

    /// Events grouped so that an event without a time follows the one it belongs to after sorting:
    /// the list is ordered by time, each untimed event kept right after its predecessor.
    static func sortedByTime(_ events: [DocumentHistory.Event]) -> [DocumentHistory.Event] {
        var groups: [[DocumentHistory.Event]] = []
        for event in events {
            if event.at == nil, !groups.isEmpty { groups[groups.count - 1].append(event) } else { groups.append([event]) }
        }
        let ordered = groups.enumerated().sorted { ($0.element[0].at ?? .distantPast, $0.offset) < ($1.element[0].at ?? .distantPast, $1.offset) }
        return ordered.flatMap(\.element)
    }

    /// A fleet event as the events `history` shows; the intake's `committed` is four.
    static func convert(_ event: FleetHistory.Event, hostName: String) -> [DocumentHistory.Event] {
        let host = event.host == hostName ? nil : event.host
        let detail = details(event.detailJSON)
        func make(_ kind: DocumentHistory.Event.Kind, _ at: Date?, _ names: [(String, String?)]) -> DocumentHistory.Event {
            DocumentHistory.Event(kind: kind, at: at, details: names.compactMap { name, value in
                value.map { DocumentHistory.Event.Detail(name: name, value: $0) }
            }, host: host)
        }
        switch event.event {
        case "committed":
            let seenAt = detail["seenAt"].flatMap(DocumentHistory.date(timestamp:)) ?? event.at
            var events = [make(.seen, seenAt, [("inbox", detail["inbox"]), ("mailbox", detail["mailbox"]), ("name", detail["name"]),
                                               ("path", detail["path"]), ("size", detail["size"])])]
            if detail["type"] != nil || detail["mime"] != nil {
                events.append(make(.typed, nil, [("type", detail["type"]), ("mime", detail["mime"]), ("by", detail["typedBy"])]))
            }
            events.append(make(.routed, nil, [("handler", detail["handler"]), ("why", detail["why"])]))
            events.append(make(.committed, event.at, [("into", "the fleet")]))
            return events
        case "sourceReclaimed": return [make(.sourceReclaimed, event.at, [])]
        case "claimed": return [make(.claimed, event.at, [("attempt", detail["attempt"])])]
        case "leaseExpired": return [make(.leaseExpired, event.at, [])]
        case "released": return [make(.released, event.at, [])]
        case "launched": return [make(.launched, event.at, [("handler", detail["handler"])])]
        case "written": return [make(.written, event.at, [("path", detail["path"])])]
        case "notified": return [make(.notified, event.at, [("by", detail["by"]), ("to", detail["to"])])]
        case "acknowledged": return [make(.acknowledged, event.at, [])]
        case "declined": return [make(.declined, event.at, [])]
        default: return []
        }
    }

    /// An event's detail object, its values as text (numbers and booleans written out).
    static func details(_ json: String) -> [String: String] {
        guard let object = JSONValue(parsingJSON: json)?.objectValue else { return [:] }
        var values: [String: String] = [:]
        for (name, value) in object {
            switch value {
            case .string(let text): values[name] = text
            case .integer(let number): values[name] = String(number)
            case .bool(let flag): values[name] = flag ? "true" : "false"
            default: break
            }
        }
        return values
    }
}
