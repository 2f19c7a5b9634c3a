/// A message from a client to the daemon (PROTOCOL.md, "Client to daemon").
///
/// Every request may carry an `id` of the client's choosing; the reply carries the same `id`.
public enum ClientMessage: Sendable, Hashable {
    /// `{"type":"hello","protocol":1}`: optional first message, answered by `welcome`.
    case hello(protocol: Int, id: String? = nil)
    /// Become the live connection of the handler with this bundle identifier; with `compete`, one
    /// of its competing connections, which share its deliveries (feature `compete`).
    case subscribe(id: String?, bundleIdentifier: String, compete: Bool = false)
    /// The handler has taken (`handled: true`) or declined a delivery. No reply on success.
    case ack(deliveryID: String, handled: Bool, id: String? = nil)
    /// Route a custom-scheme URL or a file URL to its handler; with `bundleIdentifier`, to that
    /// handler, which must be one of the candidates (Open In…, feature `open-with`).
    case open(id: String?, url: String, mailbox: String? = nil, bundleIdentifier: String? = nil)
    /// `open` with `"descriptor":true`: the file travels as a descriptor passed with `SCM_RIGHTS`
    /// alongside the line (feature `open-descriptor`); `name` is its file name (no `/`).
    case openDescriptor(id: String?, name: String, mailbox: String? = nil, bundleIdentifier: String? = nil)
    /// Every handler that could open the document at `url`, best first (feature `candidates`).
    case candidates(id: String?, url: String)
    /// `candidates` for a file passed as a descriptor, named `name`.
    case candidatesDescriptor(id: String?, name: String)
    /// Ask for the daemon's status.
    case status(id: String?)
    /// Deliver a quarantined mail attachment from its message (feature `release`): `path` is the
    /// quarantine entry `docroutectl quarantine list` shows; with `bundleIdentifier`, to that
    /// handler, which must be one of the part's Open In… candidates. For root and the admin group.
    case release(id: String?, path: String, bundleIdentifier: String? = nil)
    /// Documents' histories from the ledger, those matching every field of the query (feature
    /// `history`). For root and the admin group.
    case history(id: String?, query: HistoryRequest)
    /// Send acknowledged or declined deliveries to their handlers again (feature `redeliver`):
    /// these `deliveryIDs`, or with `declined` every declined one (of `bundleIdentifier` when
    /// given). For root and the admin group.
    case redeliver(id: String?, deliveryIDs: [String], declined: Bool = false, bundleIdentifier: String? = nil)

    /// The `type` strings clients may send.
    public static let types = ["hello", "subscribe", "ack", "open", "candidates", "status", "release", "history", "redeliver"]

    /// The request `id`, if the message carries one.
    public var id: String? {
        switch self {
        case .hello(_, let id), .subscribe(let id, _, _), .ack(_, _, let id), .open(let id, _, _, _),
            .openDescriptor(let id, _, _, _), .candidates(let id, _), .candidatesDescriptor(let id, _), .status(let id),
            .release(let id, _, _), .history(let id, _), .redeliver(let id, _, _, _):
            id
        }
    }

    /// The message's `type` field.
    public var type: String {
        switch self {
        case .hello: "hello"
        case .subscribe: "subscribe"
        case .ack: "ack"
        case .open, .openDescriptor: "open"
        case .candidates, .candidatesDescriptor: "candidates"
        case .status: "status"
        case .release: "release"
        case .history: "history"
        case .redeliver: "redeliver"
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
            self = .subscribe(id: id, bundleIdentifier: try object.string("bundleIdentifier"), compete: try object.optionalBool("compete") ?? false)
        case "ack":
            self = .ack(deliveryID: try object.string("deliveryID"), handled: try object.bool("handled"), id: id)
        case "open":
            let mailbox = try object.optionalString("mailbox")
            let bundleIdentifier = try object.optionalString("bundleIdentifier")
            if try Self.carriesDescriptor(object) {
                self = .openDescriptor(id: id, name: try Self.fileName(object), mailbox: mailbox, bundleIdentifier: bundleIdentifier)
            } else {
                self = .open(id: id, url: try object.string("url"), mailbox: mailbox, bundleIdentifier: bundleIdentifier)
            }
        case "candidates":
            if try Self.carriesDescriptor(object) {
                self = .candidatesDescriptor(id: id, name: try Self.fileName(object))
            } else {
                self = .candidates(id: id, url: try object.string("url"))
            }
        case "status":
            self = .status(id: id)
        case "release":
            self = .release(id: id, path: try object.string("path"), bundleIdentifier: try object.optionalString("bundleIdentifier"))
        case "history":
            self = .history(id: id, query: try HistoryRequest(object))
        case "redeliver":
            var identifiers: [String] = []
            if object.members["deliveryIDs"] != nil {
                for (index, value) in try object.array("deliveryIDs").enumerated() {
                    guard let text = value.stringValue else {
                        throw object.mistyped("deliveryIDs[\(index)]", expected: "a string", found: value)
                    }
                    identifiers.append(text)
                }
            }
            let declined: Bool
            switch object.members["declined"] {
            case nil, .null?: declined = false
            case .bool(let flag)?: declined = flag
            case let other?: throw object.mistyped("declined", expected: "a boolean", found: other)
            }
            guard declined != !identifiers.isEmpty else {
                throw object.invalid("give 'deliveryIDs' (a non-empty array) or \"declined\":true, not both")
            }
            self = .redeliver(id: id, deliveryIDs: identifiers, declined: declined, bundleIdentifier: try object.optionalString("bundleIdentifier"))
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
        case .subscribe(_, let bundleIdentifier, let compete):
            writer.field("bundleIdentifier", bundleIdentifier)
            if compete { writer.field("compete", true) }
        case .ack(let deliveryID, let handled, _):
            writer.field("deliveryID", deliveryID)
            writer.field("handled", handled)
        case .open(_, let url, let mailbox, let bundleIdentifier):
            writer.field("url", url)
            writer.field("bundleIdentifier", ifPresent: bundleIdentifier)
            writer.field("mailbox", ifPresent: mailbox)
        case .openDescriptor(_, let name, let mailbox, let bundleIdentifier):
            writer.field("descriptor", true)
            writer.field("name", name)
            writer.field("bundleIdentifier", ifPresent: bundleIdentifier)
            writer.field("mailbox", ifPresent: mailbox)
        case .candidates(_, let url):
            writer.field("url", url)
        case .candidatesDescriptor(_, let name):
            writer.field("descriptor", true)
            writer.field("name", name)
        case .status:
            break
        case .release(_, let path, let bundleIdentifier):
            writer.field("path", path)
            writer.field("bundleIdentifier", ifPresent: bundleIdentifier)
        case .history(_, let query):
            query.write(to: &writer)
        case .redeliver(_, let deliveryIDs, let declined, let bundleIdentifier):
            if declined {
                writer.field("declined", true)
            } else {
                writer.key("deliveryIDs")
                writer.value(JSONValue.array(deliveryIDs.map { .string($0) }))
            }
            writer.field("bundleIdentifier", ifPresent: bundleIdentifier)
        }
        writer.endObject()
        return writer.line()
    }

    /// Whether the message says a descriptor travels with it (`"descriptor":true`).
    public var carriesDescriptor: Bool {
        switch self {
        case .openDescriptor, .candidatesDescriptor: true
        default: false
        }
    }

    private static func carriesDescriptor(_ object: MessageObject) throws(ProtocolError) -> Bool {
        switch object.members["descriptor"] {
        case nil, .null?: return false
        case .bool(let flag)?: return flag
        case let other?: throw object.mistyped("descriptor", expected: "a boolean", found: other)
        }
    }

    /// A document's file name as a descriptor form gives it: one path component.
    private static func fileName(_ object: MessageObject) throws(ProtocolError) -> String {
        let name = try object.string("name")
        guard !name.isEmpty, name != ".", name != "..", !name.contains("/"), !name.contains("\0") else {
            throw object.invalid("'name' must be a file name without '/' (the document's name, such as 1abc.pdb)")
        }
        return name
    }
}
