/// One mailbox of a Maildir: the root's own (`INBOX`) or a Maildir++ folder (`.Work.Reports`).
package struct MaildirMailbox: Sendable, Hashable {
    /// The mailbox name, decoded (`INBOX`, `Été`, `Work.Reports`): the folder the attachments go to
    /// under `Documents/Inbox/`.
    package var name: String
    /// The folder's entry name under the Maildir root, raw bytes; empty for the root's own mailbox.
    package var folder: [UInt8]

    /// Creates a mailbox description.
    package init(name: String, folder: [UInt8]) {
        self.name = name
        self.folder = folder
    }

    /// Where new messages arrive, relative to the root: `new` or `.<folder>/new`.
    package var newPath: String { relative(MaildirLayout.newFolder) }
    /// Where read messages go, relative to the root: `cur` or `.<folder>/cur`.
    package var curPath: String { relative(MaildirLayout.curFolder) }

    func relative(_ leaf: String) -> String {
        folder.isEmpty ? leaf : String(decoding: folder, as: UTF8.self) + "/" + leaf
    }
}
