/// One `[[inbox]]` table: a folder the daemon watches.
package struct InboxConfiguration: Sendable, Hashable {
    package enum Kind: String, Sendable, Hashable, CaseIterable {
        /// A drop folder: files at the top go to `default_mailbox`, files in `<sub>/` to mailbox `<sub>`.
        case directory
        /// A Maildir root (mail drop).
        case maildir
    }

    package var path: String
    package var kind: Kind
    package var defaultMailbox: String
    package var sourceApplication: String

    package init(path: String, kind: Kind = .directory, defaultMailbox: String = "Inbox", sourceApplication: String = "org.docroute.drop") {
        self.path = path
        self.kind = kind
        self.defaultMailbox = defaultMailbox
        self.sourceApplication = sourceApplication
    }
}
