/// The daemon's `welcome`.
public struct DaemonWelcome: Sendable, Hashable {
    /// The protocol version the daemon speaks.
    public var protocolVersion: Int
    /// The daemon's name and version, such as `docrouted/1.0`.
    public var daemon: String
    /// The optional requests the daemon serves (``ProtocolFeature`` raw values, and any newer).
    public var features: Set<String>
    /// Where to pass descriptors, resolved against the main socket's folder; nil when not offered.
    public var descriptorSocketPath: String?

    /// Creates a welcome.
    public init(protocolVersion: Int, daemon: String, features: Set<String> = [], descriptorSocketPath: String? = nil) {
        self.protocolVersion = protocolVersion
        self.daemon = daemon
        self.features = features
        self.descriptorSocketPath = descriptorSocketPath
    }
}

/// The daemon's `candidates` reply: who could open a document, best first (Open In…).
public struct CandidateList: Sendable, Hashable {
    /// The document's type; nil for a custom-scheme URL.
    public var contentType: String?
    /// Best first; the one with `isDefault` is what a plain `open` picks.
    public var candidates: [OpenCandidate]

    /// Creates a list.
    public init(contentType: String?, candidates: [OpenCandidate]) {
        self.contentType = contentType
        self.candidates = candidates
    }
}

/// The daemon's `opened` reply: where an `open` was routed.
public struct OpenedDocument: Sendable, Hashable {
    /// The new delivery.
    public var deliveryID: String
    /// The handler it goes to.
    public var bundleIdentifier: String
    /// The file's type; `nil` for a custom-scheme URL.
    public var contentType: String?

    /// Creates an opened reply.
    public init(deliveryID: String, bundleIdentifier: String, contentType: String?) {
        self.deliveryID = deliveryID
        self.bundleIdentifier = bundleIdentifier
        self.contentType = contentType
    }
}

/// The daemon's `released` reply: a quarantined mail attachment delivered from its message.
public struct ReleasedPart: Sendable, Hashable {
    /// The quarantine entry, now removed.
    public var path: String
    /// The new delivery; `nil` when the ledger had the part delivered already.
    public var deliveryID: String?
    /// The handler it went to; `nil` when it was delivered already.
    public var bundleIdentifier: String?
    /// The attachment's type; `nil` when it was delivered already.
    public var contentType: String?

    /// Creates a released reply.
    public init(path: String, deliveryID: String?, bundleIdentifier: String?, contentType: String?) {
        self.path = path
        self.deliveryID = deliveryID
        self.bundleIdentifier = bundleIdentifier
        self.contentType = contentType
    }
}

/// The daemon's `status` reply.
public struct StatusReport: Sendable, Hashable {
    /// Every registered handler.
    public var handlers: [HandlerStatus]
    /// Every inbox folder.
    public var inboxes: [InboxStatus]
    /// Any further top-level fields the daemon sent for operators.
    public var extra: [String: JSONValue]

    /// Creates a status report.
    public init(handlers: [HandlerStatus], inboxes: [InboxStatus], extra: [String: JSONValue] = [:]) {
        self.handlers = handlers
        self.inboxes = inboxes
        self.extra = extra
    }

    /// The whole reply as a JSON object (without `type` and `id`), for printing as it came.
    public var jsonObject: [String: JSONValue] {
        var object = extra
        object["handlers"] = .array(
            handlers.map { handler in
                var entry = handler.extra
                entry["bundleIdentifier"] = .string(handler.bundleIdentifier)
                entry["subscribed"] = .bool(handler.subscribed)
                entry["pending"] = .integer(Int64(handler.pending))
                return .object(entry)
            })
        object["inboxes"] = .array(
            inboxes.map { inbox in
                var entry = inbox.extra
                entry["path"] = .string(inbox.path)
                entry["mailboxes"] = .array(inbox.mailboxes.map(JSONValue.string))
                return .object(entry)
            })
        return object
    }
}
