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
    /// Dropped from the configuration by a reload: no longer watched or shown, kept in its place
    /// so the places of the others stay (see ``DaemonConfiguration/reloaded(from:)``).
    package var retired = false

    package init(path: String, kind: Kind = .directory, defaultMailbox: String = "Inbox", sourceApplication: String = "org.docroute.drop") {
        self.path = path
        self.kind = kind
        self.defaultMailbox = defaultMailbox
        self.sourceApplication = sourceApplication
    }
}
