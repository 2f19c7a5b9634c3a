/// One handler in a `status` reply.
public struct HandlerStatus: Sendable, Hashable {
    /// The handler's bundle identifier.
    public var bundleIdentifier: String
    /// Whether a live connection is subscribed as this handler ("the app is running").
    public var subscribed: Bool
    /// How many deliveries are waiting for an acknowledgement.
    public var pending: Int
    /// Further fields for operators (written after the three above; they never replace them).
    public var extra: [String: JSONValue]

    /// Creates a handler entry.
    public init(bundleIdentifier: String, subscribed: Bool, pending: Int, extra: [String: JSONValue] = [:]) {
        self.bundleIdentifier = bundleIdentifier
        self.subscribed = subscribed
        self.pending = pending
        self.extra = extra
    }

    /// In a fleet, the hosts where the handler has live instances (sorted by name; empty when it
    /// is subscribed nowhere), from the optional `hosts` field; `nil` when the daemon is not in a
    /// fleet or could not read the fleet's database.
    public var hosts: [String]? {
        guard case .array(let names) = extra["hosts"] else { return nil }
        return names.compactMap(\.stringValue)
    }

    /// How many competing connections of the handler this daemon has, from the optional
    /// `instances` field (sent when there are more than one); 1 when it is absent and the handler
    /// is subscribed, else 0.
    public var instances: Int {
        if case .integer(let count) = extra["instances"] { return Int(count) }
        return subscribed ? 1 : 0
    }

    static let fieldNames: Set<String> = ["bundleIdentifier", "subscribed", "pending"]
}
