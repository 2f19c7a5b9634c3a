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

    static let fieldNames: Set<String> = ["bundleIdentifier", "subscribed", "pending"]
}
