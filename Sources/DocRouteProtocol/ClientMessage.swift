/// A message from a client to the daemon (PROTOCOL.md, "Client to daemon").
///
/// Every request may carry an `id` of the client's choosing; the reply carries the same `id`.
public enum ClientMessage: Sendable, Hashable {
    /// `{"type":"hello","protocol":1}`: optional first message, answered by `welcome`.
    case hello(protocol: Int, id: String? = nil)
    /// Become the live connection of the handler with this bundle identifier.
    case subscribe(id: String?, bundleIdentifier: String)
    /// The handler has taken (`handled: true`) or declined a delivery. No reply on success.
    case ack(deliveryID: String, handled: Bool, id: String? = nil)
    /// Route a custom-scheme URL or a file URL to its handler.
    case open(id: String?, url: String, mailbox: String? = nil)
    /// Ask for the daemon's status.
    case status(id: String?)

    /// The `type` strings clients may send.
    public static let types = ["hello", "subscribe", "ack", "open", "status"]

    /// The request `id`, if the message carries one.
    public var id: String? {
        switch self {
        case .hello(_, let id), .subscribe(let id, _), .ack(_, _, let id), .open(let id, _, _), .status(let id):
            id
        }
    }

    /// The message's `type` field.
    public var type: String {
        switch self {
        case .hello: "hello"
        case .subscribe: "subscribe"
        case .ack: "ack"
        case .open: "open"
        case .status: "status"
        }
    }
}

extension ClientMessage {
    /// Decodes one line received from a client (without its trailing `\n`).
    ///
    /// Unknown fields are ignored. Any failure is a `bad-request` ``ProtocolError`` whose message
    /// names the problem and whose `requestID` is the line's `id` when it could be read.
    public init(decoding line: some Collection<UInt8>) throws(ProtocolError) {
        let object = try MessageObject(line: line)
        let id = object.requestID
        switch object.type {
        case "hello":
            self = .hello(protocol: try object.integer("protocol"), id: id)
        case "subscribe":
            self = .subscribe(id: id, bundleIdentifier: try object.string("bundleIdentifier"))
        case "ack":
            self = .ack(deliveryID: try object.string("deliveryID"), handled: try object.bool("handled"), id: id)
        case "open":
            self = .open(id: id, url: try object.string("url"), mailbox: try object.optionalString("mailbox"))
        case "status":
            self = .status(id: id)
        default:
            throw object.unknownType(expected: Self.types)
        }
    }

    /// The message as one line of JSON, terminated by `\n`.
    public func encodedLine() -> [UInt8] {
        var writer = JSONLineWriter()
        writer.beginObject()
        writer.field("type", type)
        writer.field("id", ifPresent: id)
        switch self {
        case .hello(let version, _):
            writer.field("protocol", version)
        case .subscribe(_, let bundleIdentifier):
            writer.field("bundleIdentifier", bundleIdentifier)
        case .ack(let deliveryID, let handled, _):
            writer.field("deliveryID", deliveryID)
            writer.field("handled", handled)
        case .open(_, let url, let mailbox):
            writer.field("url", url)
            writer.field("mailbox", ifPresent: mailbox)
        case .status:
            break
        }
        writer.endObject()
        return writer.line()
    }
}
