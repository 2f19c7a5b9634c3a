/// A message from the daemon to a client (PROTOCOL.md).
public enum DaemonMessage: Sendable, Hashable {
    /// Reply to `hello`: `{"type":"welcome","protocol":1,"daemon":"docrouted/VERSION","features":[…]}`.
    /// `features` holds ``ProtocolFeature`` names (unknown ones kept as sent); `descriptorSocket`
    /// is where descriptors may be passed, relative to the folder of the socket the client used.
    case welcome(protocol: Int, daemon: String, id: String? = nil, features: [String] = [], descriptorSocket: String? = nil)
    /// Reply to `subscribe`; `pending` is the number of documents waiting for the handler.
    case subscribed(id: String?, bundleIdentifier: String, pending: Int)
    /// The handler's launch, sent once right after `subscribed`: with the oldest waiting
    /// document, or `nil` for a plain launch (`"launchOptions":{}` and no `deliveryID`).
    case launch(DocumentEvent?)
    /// Every other document: `application:openURL:sourceApplication:annotation:`.
    case openURL(DocumentEvent)
    /// Reply to `open`; `contentType` only for files.
    case opened(id: String?, deliveryID: String, bundleIdentifier: String, contentType: String?)
    /// Reply to `candidates`: every handler that could open the document, best first;
    /// `contentType` is absent for a custom-scheme URL.
    case candidates(id: String?, contentType: String?, candidates: [OpenCandidate])
    /// Reply to `status`. `extra` holds any further top-level fields for operators; it never
    /// replaces `type`, `id`, `handlers` or `inboxes`.
    case status(id: String?, handlers: [HandlerStatus], inboxes: [InboxStatus], extra: [String: JSONValue] = [:])
    /// Reply to `release`: the quarantined part at `path` was delivered (`deliveryID`, to
    /// `bundleIdentifier`, typed `contentType`), or all three are absent when the ledger had it
    /// delivered already. Either way its entry is gone.
    case released(id: String?, path: String, deliveryID: String?, bundleIdentifier: String?, contentType: String?)
    /// Reply to `history`: each document found, newest first, as an object (its fields and its
    /// `events`; docs/PROTOCOL.md, "Proposal (docrouted): history"); in a fleet, `fleet` says
    /// whether the fleet's part could be read (`{"host","readable","error"}`).
    case history(id: String?, documents: [JSONValue], fleet: JSONValue? = nil)
    /// Reply to `redeliver`: one object per delivery id (`deliveryID`, `outcome`, `message`, and
    /// `bundleIdentifier` and `path` when known).
    case redelivered(id: String?, results: [JSONValue])
    /// A failed request, or a line the daemon could not read.
    case error(id: String?, code: ErrorCode, message: String)

    /// The plain launch: nothing was waiting, so there is nothing to acknowledge.
    public static let plainLaunch = DaemonMessage.launch(nil)

    /// The `error` message reporting `error`, echoing its request id.
    public static func error(_ error: ProtocolError) -> DaemonMessage {
        .error(id: error.requestID, code: error.code, message: error.message)
    }

    /// The `type` strings the daemon sends.
    public static let types = ["welcome", "subscribed", "launch", "openURL", "opened", "candidates", "status", "released", "history", "redelivered", "error"]

    /// The message's `type` field.
    public var type: String {
        switch self {
        case .welcome: "welcome"
        case .subscribed: "subscribed"
        case .launch: "launch"
        case .openURL: "openURL"
        case .opened: "opened"
        case .candidates: "candidates"
        case .status: "status"
        case .released: "released"
        case .history: "history"
        case .redelivered: "redelivered"
        case .error: "error"
        }
    }

    /// The `id` of the request this message answers, if any.
    public var id: String? {
        switch self {
        case .welcome(_, _, let id, _, _), .subscribed(let id, _, _), .opened(let id, _, _, _), .status(let id, _, _, _),
            .candidates(let id, _, _), .released(let id, _, _, _, _), .error(let id, _, _),
            .history(let id, _, _), .redelivered(let id, _):
            id
        case .launch, .openURL:
            nil
        }
    }
}
