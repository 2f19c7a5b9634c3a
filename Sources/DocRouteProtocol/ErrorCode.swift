/// The `code` of an `error` message, as listed in PROTOCOL.md's error table.
///
/// Raw values are the exact strings on the wire.
public enum ErrorCode: String, Sendable, Hashable, CaseIterable, Codable {
    /// Not JSON, no `type`, a missing or mistyped field, or a line over 1 MiB.
    case badRequest = "bad-request"
    /// `protocol` in `hello` is not one the daemon speaks.
    case unsupportedProtocol = "unsupported-protocol"
    /// No registered handler has that bundle identifier.
    case unknownHandler = "unknown-handler"
    /// The peer's uid may not do this.
    case notPermitted = "not-permitted"
    /// Another live connection is subscribed as that handler.
    case alreadySubscribed = "already-subscribed"
    /// `open`: nothing claims that URL scheme or content type.
    case noHandler = "no-handler"
    /// `open`: the file does not exist; `ack`: unknown delivery.
    case notFound = "not-found"
    /// The connection is refused: too many are open in all, from this uid, or only handlers may
    /// take the ones left. It is closed after this line.
    case tooManyConnections = "too-many-connections"
    /// The daemon failed; the message says what.
    case `internal` = "internal"
}
