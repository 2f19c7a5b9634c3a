/// The query of a `history` request (feature `history`): the documents matching every field given.
///
/// Times are RFC 3339 in UTC (`2026-11-26T10:02:00Z`, a fraction allowed) and passed on as sent;
/// the daemon refuses one it cannot read.
public struct HistoryRequest: Sendable, Hashable {
    public var deliveryID: String?
    /// The document's name as it arrived (`notes.txt`).
    public var name: String?
    /// A path it had: its source in an inbox or its copy in a sandbox.
    public var path: String?
    /// The handler it went to.
    public var bundleIdentifier: String?
    /// Seen at or after.
    public var since: String?
    /// Seen before.
    public var until: String?
    /// Where it is now: `staged`, `owed`, `acknowledged`, `declined`, `quarantined`, `skipped`.
    public var state: String?
    /// The most documents in the reply.
    public var limit: Int?

    /// Creates a query.
    public init(deliveryID: String? = nil, name: String? = nil, path: String? = nil, bundleIdentifier: String? = nil,
                since: String? = nil, until: String? = nil, state: String? = nil, limit: Int? = nil) {
        self.deliveryID = deliveryID
        self.name = name
        self.path = path
        self.bundleIdentifier = bundleIdentifier
        self.since = since
        self.until = until
        self.state = state
        self.limit = limit
    }

    init(_ object: MessageObject) throws(ProtocolError) {
        self.init(
            deliveryID: try object.optionalString("deliveryID"), name: try object.optionalString("name"),
            path: try object.optionalString("path"), bundleIdentifier: try object.optionalString("bundleIdentifier"),
            since: try object.optionalString("since"), until: try object.optionalString("until"),
            state: try object.optionalString("state"),
            limit: object.members["limit"].flatMap { $0 == .null ? nil : $0 } == nil ? nil : try object.integer("limit"))
        if let limit, limit < 1 { throw object.invalid("'limit' must be at least 1") }
    }

    func write(to writer: inout JSONLineWriter) {
        writer.field("deliveryID", ifPresent: deliveryID)
        writer.field("name", ifPresent: name)
        writer.field("path", ifPresent: path)
        writer.field("bundleIdentifier", ifPresent: bundleIdentifier)
        writer.field("since", ifPresent: since)
        writer.field("until", ifPresent: until)
        writer.field("state", ifPresent: state)
        if let limit { writer.field("limit", limit) }
    }
}
