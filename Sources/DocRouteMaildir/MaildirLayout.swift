import DocRouteConfiguration
import DocRouteMail
import DocRoutePlatform
import SystemPackage

/// Where the mailboxes and messages of a Maildir root are (Maildir++ as Courier, Dovecot and
/// Postfix's virtual delivery write it).
///
/// The root's `new/` is mailbox `INBOX`; each folder `.<name>` holding a `new/` is mailbox `<name>`
/// decoded from IMAP's modified UTF-7 (`.Work.Reports` is `Work.Reports`). Only `new/` is ever read
/// for messages: `tmp/` holds deliveries in progress and is never touched; `cur/` is only written
/// to (``MaildirMessageName/markRead(_:newFolder:curFolder:describing:)``).
package enum MaildirLayout {
    /// Where an MDA renames a finished message.
    package static let newFolder = "new"
    /// Where a message goes once seen.
    package static let curFolder = "cur"
    /// Where an MDA writes a message it is delivering; never read.
    package static let tmpFolder = "tmp"

    /// The mailboxes of the Maildir whose root folder is open as `root` (the descriptor stays the
    /// caller's), in a stable order: `INBOX` first, then by name. Links are never followed, folders
    /// without a `new/` are left out, and so are folders whose decoded name cannot be a folder name.
    /// - Throws: `Errno` when the root cannot be listed.
    package static func mailboxes(in root: Int32) throws(Errno) -> [MaildirMailbox] {
        var found: [MaildirMailbox] = []
        var others: [MaildirMailbox] = []
        for entry in try FileDescriptor(rawValue: root).directoryEntries() where entry.isDirectory {
            let name = entry.nameBytes
            if name == Array(newFolder.utf8) {
                found.append(MaildirMailbox(name: MaildirFolderName.inbox, folder: []))
            } else if let mailbox = mailbox(forEntry: name), hasNewFolder(entry.name, in: root) {
                others.append(mailbox)
            }
        }
        others.sort { $0.name != $1.name ? $0.name < $1.name : $0.folder.lexicographicallyPrecedes($1.folder) }
        return found + others
    }

    /// The mailbox a top-level entry of the root stands for (`.Sent` is `Sent`), or nil when the
    /// entry is not a Maildir++ folder or its decoded name cannot be a mailbox folder (empty, `/`,
    /// NUL, control characters, over 255 bytes). For an entry that appears later (inotify): its
    /// `new/` may come a moment after it, so watch the folder until `new/` exists.
    package static func mailbox(forEntry name: [UInt8]) -> MaildirMailbox? {
        guard let decoded = MaildirFolderName.mailbox(forFolder: name),
              DaemonConfiguration.isValidMailbox(decoded),
              !decoded.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) else { return nil }
        return MaildirMailbox(name: decoded, folder: name)
    }

    /// Whether `folder/new` is a real folder (neither `folder` nor `new` followed if a link).
    package static func hasNewFolder(_ folder: FilePath.Component, in root: Int32) -> Bool {
        guard let descriptor = try? FileDescriptor(rawValue: root).openDirectory(folder) else { return false }
        defer { descriptor.closeIgnoringErrors() }
        let found = try? descriptor.status(of: FilePath.Component(newFolder)!)
        return found?.isDirectory ?? false
    }
}
