import Logging

/// The fixed journal `MESSAGE_ID`s of docroute's notable events.
///
/// An admin finds every delivery with `journalctl MESSAGE_ID=31669d38d12b455bb3404bef73eefbfa`
/// whatever the wording of the message, and `journalctl -x` shows the catalog text installed from
/// `systemd/docroute.catalog`. The ids never change once released.
///
/// Log one by putting its name under the metadata key ``metadataKey``:
/// `logger.info("delivered", metadata: [DocRouteMessageID.metadataKey: DocRouteMessageID.delivered.metadataValue])`.
package struct DocRouteMessageID: Hashable, Sendable, CustomStringConvertible {
    /// The metadata key whose value names the event.
    package static let metadataKey = "message-id"

    /// The short name used as metadata value, e.g. `delivered`.
    package let name: String
    /// The 128-bit id as 32 lowercase hexadecimal digits, as `journalctl --new-id128` prints it.
    package let id128: String

    private init(name: String, id128: String) {
        self.name = name
        self.id128 = id128
    }

    /// A document was copied into a handler's sandbox and recorded in the ledger.
    package static let delivered = DocRouteMessageID(name: "delivered", id128: "31669d38d12b455bb3404bef73eefbfa")
    /// A document no handler claims was moved to the quarantine folder.
    package static let quarantined = DocRouteMessageID(name: "quarantined", id128: "35aa6a7327534f0192f371f2d4e78602")
    /// A handler subscribed and was sent its `launch` event.
    package static let handlerLaunched = DocRouteMessageID(
        name: "handler-launched", id128: "be4388ca850546659d3b6865e29c6598")

    /// Every docroute message id.
    package static let all: [DocRouteMessageID] = [.delivered, .quarantined, .handlerLaunched]

    /// The message id that a metadata value names, by ``name`` or by ``id128``; `nil` for any other.
    package init?(metadataValue: String) {
        guard let known = Self.all.first(where: { $0.name == metadataValue || $0.id128 == metadataValue }) else {
            return nil
        }
        self = known
    }

    /// The value to log under ``metadataKey``.
    package var metadataValue: Logger.MetadataValue { .string(name) }

    /// The short name.
    package var description: String { name }
}
