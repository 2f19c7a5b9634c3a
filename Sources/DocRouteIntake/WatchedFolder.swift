/// A folder under inotify watch: an inbox root or one of its mailbox subfolders.
package struct WatchedFolder: Sendable, Hashable {
    /// What a watched folder is, so an event in it is read the right way.
    package enum Role: Sendable, Hashable {
        /// A `directory` inbox's root or one of its mailbox folders: every file is a document.
        case drop
        /// A Maildir's root: its `new/` and Maildir++ folders (`.Name`) appear here.
        case maildirRoot
        /// A Maildir++ folder (`.Name`) whose `new/` does not exist yet.
        case maildirFolder
        /// A mailbox's `new/`: every entry renamed in is a message.
        case maildirNew
    }

    /// Index into the configuration's inboxes.
    package var inbox: Int
    /// nil for the inbox root; the mailbox name for `<inbox>/<mailbox>/` (or a Maildir mailbox).
    package var mailbox: String?
    package var path: String
    package var role: Role = .drop

    package init(inbox: Int, mailbox: String?, path: String, role: Role = .drop) {
        self.inbox = inbox
        self.mailbox = mailbox
        self.path = path
        self.role = role
    }
}
