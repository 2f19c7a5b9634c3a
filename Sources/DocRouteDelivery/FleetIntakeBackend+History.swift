import DocRouteFleet
import DocRouteIntake
import DocRouteLedger
import DocRouteProtocol
import Foundation

extension FleetIntakeBackend {
    /// What intake knew of `document`, as its `committed` event keeps it in `history_events`:
    /// the names ``FleetHistoryMerge`` reads back into `seen`, `typed` and `routed`.
    static func intakeDetail(of document: DocumentDelivery) -> String {
        var object: [String: JSONValue] = [
            "seenAt": .string(DocumentHistory.timestamp(document.seenAt)),
            "path": .string(document.sourcePath),
            "mailbox": .string(document.mailbox),
            "name": .string(document.originalName),
            "size": .integer(document.sourceStatus.size),
            "type": .string(document.contentType),
            "handler": .string(document.bundleIdentifier),
        ]
        func put(_ name: String, _ value: String?) { if let value { object[name] = .string(value) } }
        put("inbox", document.inbox ?? (document.sourcePath as NSString).deletingLastPathComponent)
        put("mime", document.mimeType)
        put("typedBy", document.typedBy)
        put("why", document.routedBy)
        guard let data = try? JSONEncoder().encode(JSONValue.object(object)) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// Records in the fleet that these sources were taken out of their inboxes, with the other
    /// events of the moment (``FleetHistoryWriter``), without holding up the next batch's intake;
    /// a failure only leaves the event out.
    func recordFreed(_ deliveryIDs: [UUID], at date: Date) {
        guard !deliveryIDs.isEmpty else { return }
        let events = deliveryIDs.map { FleetQueue.HistoryRecord(deliveryID: $0, event: "sourceReclaimed", at: date) }
        history.record(events)
    }
}
