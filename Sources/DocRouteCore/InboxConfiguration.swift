/// One `[[inbox]]` table: a folder the daemon watches.
public struct InboxConfiguration: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// A drop folder: files at the top go to `default_mailbox`, files in `<sub>/` to mailbox `<sub>`.
        case directory
        /// A Maildir root (mail drop).
        case maildir
    }

    public var path: String
    public var kind: Kind
    public var defaultMailbox: String
    public var sourceApplication: String

    public init(path: String, kind: Kind = .directory, defaultMailbox: String = "Inbox", sourceApplication: String = "org.docroute.drop") {
        self.path = path
        self.kind = kind
        self.defaultMailbox = defaultMailbox
        self.sourceApplication = sourceApplication
    }
}
