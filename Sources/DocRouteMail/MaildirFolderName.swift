/// Mailbox names of Maildir++ folders (Courier, Dovecot): a folder `.<name>` at the top of a Maildir
/// is mailbox `<name>`, `.` separates levels (`.Work.Reports` is `Work.Reports`), and the name is
/// IMAP's modified UTF-7 (`.&AMk-t&AOk-` is `Été`).
package enum MaildirFolderName {
    /// The mailbox of the root Maildir (its own `new/`, `cur/`, `tmp/`).
    package static let inbox = "INBOX"

    /// The mailbox name for a top-level folder entry, or nil when the entry is not a Maildir++ folder
    /// (no leading dot, `.`, `..`, only dots). A name that is not valid modified UTF-7 is kept as
    /// written (bytes that are not UTF-8 become U+FFFD): a mailbox must never be lost over its spelling.
    package static func mailbox(forFolder entry: [UInt8]) -> String? {
        guard entry.count >= 2, entry[0] == 0x2E else { return nil }
        let name = Array(entry.dropFirst())
        guard name.contains(where: { $0 != 0x2E }) else { return nil }
        return ModifiedUTF7.decode(name, variant: .imap) ?? String(decoding: name, as: UTF8.self)
    }

    /// ``mailbox(forFolder:)`` for a name given as text.
    package static func mailbox(forFolder entry: String) -> String? {
        mailbox(forFolder: Array(entry.utf8))
    }
}
