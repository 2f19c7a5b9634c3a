import DocRouteProtocol
import Foundation

/// A document's history as JSON: the `documents` of the socket's `history` reply and the lines
/// of `docroutectl history --json`, so both say the same thing under the same names.
extension DocumentHistory {
    /// The document as a JSON object: its fields (absent ones left out), times as RFC 3339 in
    /// UTC with milliseconds, and `events`, each `{"event","at","details":{…}}`, in order.
    package var json: JSONValue {
        var object: [String: JSONValue] = ["state": .string(state.rawValue)]
        func put(_ name: String, _ value: String?) { if let value { object[name] = .string(value) } }
        func put(_ name: String, _ value: Date?) { if let value { object[name] = .string(Self.timestamp(value)) } }
        put("deliveryID", deliveryID?.protocolText)
        put("url", url)
        put("originalName", originalName)
        put("inbox", inbox)
        put("sourcePath", sourcePath)
        put("mailbox", mailbox)
        if let size { object["size"] = .integer(size) }
        put("contentType", contentType)
        put("mimeType", mimeType)
        put("typedBy", typedBy)
        put("bundleIdentifier", bundleIdentifier)
        put("routedBy", routedBy)
        put("finalPath", finalPath)
        put("messageID", messageID)
        put("partPath", partPath)
        put("reason", reason)
        put("quarantinePath", quarantinePath)
        put("seenAt", seenAt)
        put("committedAt", committedAt)
        put("notifiedAt", notifiedAt)
        put("notifiedBy", notifiedBy)
        put("notifiedTo", notifiedTo)
        put("settledAt", settledAt)
        put("sourceRemovedAt", sourceRemovedAt)
        if !earlierRounds.isEmpty {
            object["earlierRounds"] = .array(earlierRounds.map(\.json))
        }
        object["events"] = .array(events.map { event in
            var members: [String: JSONValue] = ["event": .string(event.kind.rawValue)]
            if let at = event.at { members["at"] = .string(Self.timestamp(at)) }
            members["details"] = .object(Dictionary(event.details.map { ($0.name, JSONValue.string($0.value)) }, uniquingKeysWith: { $1 }))
            if let host = event.host { members["host"] = .string(host) }
            return .object(members)
        })
        return .object(object)
    }

    /// Reads ``json`` back; nil when it is not an object with a known `state`. Its `events` are
    /// kept as given (a fleet's host may have told some): those of a kind this docroute does not
    /// know are left out; details come in the order of ``detailOrder``, then by name.
    package init?(json: JSONValue) {
        guard let object = json.objectValue, let state = object["state"]?.stringValue.flatMap(State.init(rawValue:)) else { return nil }
        func string(_ name: String) -> String? { object[name]?.stringValue }
        func date(_ name: String) -> Date? { string(name).flatMap(Self.date(timestamp:)) }
        self.init(deliveryID: string("deliveryID").flatMap(UUID.init(uuidString:)), state: state)
        url = string("url")
        originalName = string("originalName")
        inbox = string("inbox")
        sourcePath = string("sourcePath")
        mailbox = string("mailbox")
        if case .integer(let value)? = object["size"] { size = value }
        contentType = string("contentType")
        mimeType = string("mimeType")
        typedBy = string("typedBy")
        bundleIdentifier = string("bundleIdentifier")
        routedBy = string("routedBy")
        finalPath = string("finalPath")
        messageID = string("messageID")
        partPath = string("partPath")
        reason = string("reason")
        quarantinePath = string("quarantinePath")
        seenAt = date("seenAt")
        committedAt = date("committedAt")
        notifiedAt = date("notifiedAt")
        notifiedBy = string("notifiedBy")
        notifiedTo = string("notifiedTo")
        settledAt = date("settledAt")
        sourceRemovedAt = date("sourceRemovedAt")
        if case .array(let rounds)? = object["earlierRounds"] {
            earlierRounds = rounds.compactMap(Round.init(json:))
        }
        if case .array(let events)? = object["events"] {
            givenEvents = events.compactMap(Event.init(json:))
        }
    }

    /// The order details are shown in, as the ledger's events name them; others after, by name.
    static let detailOrder = ["host", "inbox", "mail", "url", "mailbox", "name", "reason", "path", "size", "message", "part", "type", "mime",
                              "by", "handler", "why", "to", "heldBy", "attempt", "handled"]

    /// `2026-11-26T10:02:03.125Z`.
    package static func timestamp(_ date: Date) -> String {
        UTCTimestamp(date).ledgerText.replacingOccurrences(of: " ", with: "T") + "Z"
    }

    /// Reads ``timestamp(_:)``'s form back.
    package static func date(timestamp text: String) -> Date? {
        guard text.hasSuffix("Z") else { return nil }
        return UTCTimestamp(ledgerText: String(text.dropLast()).replacingOccurrences(of: "T", with: " "))?.date
    }
}

extension DocumentHistory.Round {
    /// The round as JSON, as the ledger keeps it in a row's `redeliveries`.
    package var json: JSONValue {
        var object: [String: JSONValue] = [
            "settled": .string(settled.rawValue), "redeliveredAt": .string(DocumentHistory.timestamp(redeliveredAt)),
        ]
        if let notifiedAt { object["notifiedAt"] = .string(DocumentHistory.timestamp(notifiedAt)) }
        if let notifiedBy { object["notifiedBy"] = .string(notifiedBy) }
        if let notifiedTo { object["notifiedTo"] = .string(notifiedTo) }
        if let settledAt { object["settledAt"] = .string(DocumentHistory.timestamp(settledAt)) }
        return .object(object)
    }

    package init?(json: JSONValue) {
        guard let object = json.objectValue,
              let settled = object["settled"]?.stringValue.flatMap(DocumentHistory.State.init(rawValue:)),
              let redeliveredAt = object["redeliveredAt"]?.stringValue.flatMap(DocumentHistory.date(timestamp:)) else { return nil }
        self.init(notifiedAt: object["notifiedAt"]?.stringValue.flatMap(DocumentHistory.date(timestamp:)),
                  notifiedBy: object["notifiedBy"]?.stringValue, notifiedTo: object["notifiedTo"]?.stringValue,
                  settled: settled, settledAt: object["settledAt"]?.stringValue.flatMap(DocumentHistory.date(timestamp:)),
                  redeliveredAt: redeliveredAt)
    }
}

extension DocumentHistory.Event {
    /// Reads an event of ``DocumentHistory/json`` back; nil for an unknown kind.
    package init?(json: JSONValue) {
        guard let object = json.objectValue, let kind = object["event"]?.stringValue.flatMap(Kind.init(rawValue:)) else { return nil }
        var details: [Detail] = []
        if let members = object["details"]?.objectValue {
            func rank(_ name: String) -> Int { DocumentHistory.detailOrder.firstIndex(of: name) ?? Int.max }
            for name in members.keys.sorted(by: { (rank($0), $0) < (rank($1), $1) }) {
                if let value = members[name]?.stringValue { details.append(Detail(name: name, value: value)) }
            }
        }
        self.init(kind: kind, at: object["at"]?.stringValue.flatMap(DocumentHistory.date(timestamp:)), details: details,
                  host: object["host"]?.stringValue)
    }
}
