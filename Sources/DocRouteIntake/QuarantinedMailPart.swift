import DocRouteHandlers
import DocRoutePlatform
import Foundation
import SystemPackage

/// A mail attachment that no handler claims, as the quarantine records it: a small entry naming
/// its message and part, never the attachment's bytes.
///
/// The message itself stays in its Maildir, where a mail client reads it (moved to `cur/` with the
/// `S` flag once its other parts are delivered, as before), so the attachment's bytes are kept
/// once, by the mail. `docroutectl quarantine release` asks docrouted to read the message again and
/// deliver just this part; the ledger's record of delivered parts keeps it from being delivered
/// twice.
///
/// The entry is `<quarantine_directory>/<mailbox>/<message unique name>_part<part>.mailpart`, one
/// JSON object. Its name follows from the message and the part alone, so a message read again (a
/// retry, a restart before it was marked read) rewrites the same entry instead of adding one.
package struct QuarantinedMailPart: Codable, Sendable, Hashable {
    /// What the entry's `format` field holds; an entry with another is not read as a mail part.
    package static let format = "docroute-mail-part/1"
    /// The suffix of mail part entries.
    package static let suffix = ".mailpart"
    /// The largest entry read: an entry is a few hundred bytes; anything bigger is not one.
    package static let maximumEntrySize = 64 * 1024

    package var format: String = Self.format
    /// The Maildir inbox's root, as the configuration names it.
    package var maildir: String
    /// The Maildir++ folder holding the message's `new/` and `cur/` (`.Work`), empty for the
    /// root's own mailbox.
    package var folder: String
    /// The mailbox its attachments are delivered into (`INBOX`, `Work`).
    package var mailbox: String
    /// The message file's unique name (its name in `new/`, and before `:2,` in `cur/`).
    package var messageName: String
    /// The message's key in the ledger: its Message-ID, or `maildir:<unique name>` without one.
    package var messageID: String
    /// The IMAP part number (`2`, `3.1`).
    package var partPath: String
    /// The attachment's file name, as the mail spells it.
    package var fileName: String
    /// The part's `Content-Type`.
    package var mimeType: String
    /// The type docrouted found (UTI).
    package var contentType: String
    /// The decoded size in bytes.
    package var size: Int64
    /// Why it is here, with what to do.
    package var reason: String
    /// When it was recorded (RFC 3339, UTC).
    package var quarantinedAt: String

    package init(maildir: String, folder: String, mailbox: String, messageName: String, messageID: String, partPath: String,
                 fileName: String, mimeType: String, contentType: String, size: Int64, reason: String, quarantinedAt: String) {
        self.maildir = maildir
        self.folder = folder
        self.mailbox = mailbox
        self.messageName = messageName
        self.messageID = messageID
        self.partPath = partPath
        self.fileName = fileName
        self.mimeType = mimeType
        self.contentType = contentType
        self.size = size
        self.reason = reason
        self.quarantinedAt = quarantinedAt
    }

    /// The entry's file name: `<unique name>_part<part>.mailpart`, made safe (``SandboxName``) and
    /// short enough for any file system.
    package static func entryName(messageName: String, partPath: String) -> String {
        let limit = SandboxName.fileNameLimit - suffix.utf8.count
        return SandboxName.sanitizedComponent(messageName + "_part" + partPath, maximumBytes: limit) + suffix
    }

    /// This entry's file name.
    package var entryName: String { Self.entryName(messageName: messageName, partPath: partPath) }

    /// The folder of the quarantine it goes in (the mailbox made safe, as files' folders are).
    package var quarantineFolder: String { SandboxName.sanitizedComponent(mailbox) }

    /// The message's folders, relative to the Maildir root: `cur` or `.Work/cur`.
    package func messageFolder(_ leaf: String) -> String {
        folder.isEmpty ? leaf : folder + "/" + leaf
    }

    /// The entry as written: indented JSON, keys sorted, so that `cat` shows it plainly.
    package func encoded() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(self)) + [UInt8(ascii: "\n")]
    }

    /// The entry `bytes` hold, or nil when they are not a mail part entry (a quarantined file that
    /// happens to end in `.mailpart` is read as a file).
    package static func decode(_ bytes: some Collection<UInt8>) -> QuarantinedMailPart? {
        guard bytes.count <= maximumEntrySize,
              let entry = try? JSONDecoder().decode(QuarantinedMailPart.self, from: Data(bytes)),
              entry.format == format else { return nil }
        return entry
    }

    /// Writes (or rewrites) the entry in `<quarantineDirectory>/<mailbox>/`, atomically.
    /// - Returns: the entry's path.
    /// - Throws: ``DeliveryError`` when the folder cannot be made or the entry written.
    @discardableResult
    package func write(in quarantineDirectory: String) throws -> String {
        let folder = quarantineDirectory + "/" + quarantineFolder
        do {
            // 0750 as the quarantine's other folders: the admin group reads what is in it.
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o750])
        } catch {
            throw DeliveryError(code: .permissionDenied, message: "Cannot create the quarantine folder \(folder): \(error). Create it and make it writable for docrouted.", cause: error)
        }
        let path = folder + "/" + entryName
        try AtomicFile.replace(FilePath(path), with: try encoded(), mode: 0o640)
        return path
    }

    /// Whether the entry is in the quarantine already (the message was read before).
    package func isRecorded(in quarantineDirectory: String) -> Bool {
        let folder = FilePath(quarantineDirectory).appending(quarantineFolder)
        guard let name = FilePath.Component(entryName), let descriptor = try? FileDescriptor.openDirectory(atPath: folder) else { return false }
        defer { descriptor.closeIgnoringErrors() }
        return (try? descriptor.status(of: name)) != nil
    }

    /// Removes the entry for a part that was delivered after all (the message was read again once a
    /// handler claimed it); true when there was one.
    @discardableResult
    package static func remove(mailbox: String, messageName: String, partPath: String, in quarantineDirectory: String) -> Bool {
        let folder = FilePath(quarantineDirectory).appending(SandboxName.sanitizedComponent(mailbox))
        guard let name = FilePath.Component(entryName(messageName: messageName, partPath: partPath)),
              let descriptor = try? FileDescriptor.openDirectory(atPath: folder) else { return false }
        defer { descriptor.closeIgnoringErrors() }
        return (try? descriptor.unlink(name)) == true
    }
}
