/// One inbox folder in a `status` reply.
public struct InboxStatus: Sendable, Hashable {
    /// The inbox folder's path.
    public var path: String
    /// The mailboxes files arrive in through this inbox.
    public var mailboxes: [String]
    /// Further fields for operators (written after the two above; they never replace them).
    public var extra: [String: JSONValue]

    /// Creates an inbox entry.
    public init(path: String, mailboxes: [String], extra: [String: JSONValue] = [:]) {
        self.path = path
        self.mailboxes = mailboxes
        self.extra = extra
    }

    static let fieldNames: Set<String> = ["path", "mailboxes"]
}
