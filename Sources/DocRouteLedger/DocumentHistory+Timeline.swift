import DocRoutePlatform
import Foundation

/// A document's history as an operator reads it (`docroutectl history`): a header line, then one
/// line per event in local time.
extension DocumentHistory {
    /// The header and the event lines, e.g.
    ///
    ///     notes.txt  delivery 6F1C…  acknowledged  (com.example.viewer)
    ///       2026-11-26 10:02:03  seen          inbox /srv/inbox, mailbox inbox, size 12, path /srv/inbox/notes.txt
    ///
    /// `localTime` turns a moment into the wall-clock reading shown (the host's, by default).
    package func timeline(localTime: (Date) -> LocalTime = { LocalTime($0) }) -> [String] {
        var header = originalName ?? url ?? "(no name)"
        header += deliveryID.map { "  delivery \($0.protocolText)" } ?? "  (no delivery)"
        header += "  " + state.rawValue
        if let bundleIdentifier { header += "  (\(bundleIdentifier))" }
        var lines = [header]
        var previousDay: String?
        for event in events {
            let when: String
            if let at = event.at {
                let local = localTime(at)
                // The day is written when it changes, so a story within one day reads as clock times.
                when = (local.dayText == previousDay ? String(repeating: " ", count: 11) : local.dayText + " ") + local.clockText
                previousDay = local.dayText
            } else {
                when = String(repeating: " ", count: 19)
            }
            var details = event.details.map { Self.detailText($0) }.joined(separator: ", ")
            // In a fleet, what another host did says which host.
            if let host = event.host { details = "on host \(host)" + (details.isEmpty ? "" : ", " + details) }
            let word = Self.word(event.kind)
            lines.append("  \(when)  " + (details.isEmpty ? word : word.padding(toLength: 13, withPad: " ", startingAt: 0) + details))
        }
        return lines
    }

    /// The word an event is shown as.
    static func word(_ kind: Event.Kind) -> String {
        switch kind {
        case .notified: "told"
        case .sourceReclaimed: "source freed"
        case .leaseExpired: "lease expired"
        case .released: "given back"
        default: kind.rawValue
        }
    }

    /// `size 12 bytes`, `by extension`, `why default`: a detail as a phrase.
    static func detailText(_ detail: Event.Detail) -> String {
        switch detail.name {
        case "size": "size \(detail.value) bytes"
        case "type": detail.value
        case "to": "on \(detail.value)"
        case "by": "by \(detail.value)"
        case "heldBy": "held by \(detail.value)"
        default: "\(detail.name) \(detail.value)"
        }
    }
}
