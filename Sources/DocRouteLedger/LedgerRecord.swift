import DocRoutePlatform
import Foundation
import SystemPackage

/// One delivery in the ledger: a file copied into a handler's sandbox, or a custom-scheme URL,
/// that the handler is owed an event for until it acknowledges it.
package struct LedgerRecord: Sendable, Hashable {
    /// What was delivered.
    package enum Kind: String, Sendable, Hashable, Codable {
        /// A file copied into the sandbox.
        case file
        /// A custom-scheme URL (`todolist://…`).
        case url
    }

    /// Where the delivery is in its life.
    package enum State: String, Sendable, Hashable, Codable, CaseIterable {
        /// The copy is synced under its temporary name; not yet under its final name. Only
        /// recovery ever sees these after a crash; never sent to a handler.
        case staged
        /// The copy is in place and durable; the handler is owed an event.
        case committed
        /// The handler took it (`ack` with `handled: true`).
        case acknowledged
        /// The handler declined it (`ack` with `handled: false`); it is not sent again.
        case declined
    }

    /// The delivery's identifier: never changes, so a handler can drop duplicates.
    package var deliveryID: UUID
    /// The commit order: increasing forever, per ledger, with gaps (a discarded row leaves one);
    /// 0 while ``state`` is `staged`.
    package var sequence: Int64
    /// The handler's bundle identifier.
    package var bundleIdentifier: String
    /// File or URL.
    package var kind: Kind
    /// For a URL delivery: the URL as given.
    package var url: String?
    /// The sandbox mailbox (`Documents/Inbox/<mailbox>`), for a file.
    package var mailbox: String?
    /// The file's own name, sanitised (what `originalFilename` in the annotation says).
    package var originalName: String?
    /// The extension chain the type engine recognised in the name (`.pdb.gz`): the counter of a
    /// taken name goes before it, also when recovery has to pick another name.
    package var extensionChain: String?
    /// The handler's container root the copy was written below.
    package var containerPath: String?
    /// Absolute path of the copy in the sandbox.
    package var finalPath: String?
    /// Device of the copy (a rename keeps it): tells our copy from a file of the same name.
    package var finalDevice: UInt64?
    /// Inode of the copy.
    package var finalInode: UInt64?
    /// Absolute path of the copy's temporary while staged.
    package var temporaryPath: String?
    /// The file's Uniform Type Identifier.
    package var contentType: String?
    /// Bytes.
    package var size: Int64?
    /// SHA-256 of the bytes, lowercase hex.
    package var sha256: String?
    /// `sourceApplication` of the event, if any.
    package var sourceApplication: String?
    /// The event's annotation: a JSON object, as text.
    package var annotation: String?
    /// Where the delivery is in its life.
    package var state: State
    /// The source file in its inbox (raw bytes: a name need not be UTF-8).
    package var sourcePath: FilePath?
    /// The source's `st_dev`.
    package var sourceDevice: UInt64?
    /// The source's `st_ino`.
    package var sourceInode: UInt64?
    /// The source's size when it was opened.
    package var sourceSize: Int64?
    /// The source's modification time when it was opened, in nanoseconds since 1970.
    package var sourceMtimeNs: Int64?
    /// For a mail attachment: the message's Message-ID.
    package var messageID: String?
    /// For a mail attachment: which MIME part.
    package var partPath: String?
    /// When the delivery was staged (or a URL recorded).
    package var createdAt: Date
    /// When it was committed.
    package var committedAt: Date?
    /// When the handler acknowledged or declined it.
    package var acknowledgedAt: Date?
    /// When the source was removed from its inbox (or found gone); `nil` until then.
    package var sourceRemovedAt: Date?
    /// The uid whose `open` asked for it, counted against its `max_pending_per_uid`; nil for an
    /// inbox's file (and a request whose uid is not limited).
    package var requesterUID: UInt32?
    /// When intake saw the file (opened, typed and routed it); nil for a URL.
    package var seenAt: Date?
    /// The inbox it came from (for a mail part, the Maildir).
    package var inbox: String?
    /// Its MIME type, as typing found it.
    package var mimeType: String?
    /// How its type was decided (`extension`, `content`, `mime`, `dynamic`).
    package var typedBy: String?
    /// Why it went to its handler.
    package var routedBy: String?
    /// When its handler was last told of it, how (`launch`, `openURL`), and on which connection.
    package var notifiedAt: Date?
    package var notifiedBy: String?
    package var notifiedTo: String?

    /// Creates a record; the ledger fills in ``sequence`` and the dates it owns.
    package init(
        deliveryID: UUID = .random(),
        sequence: Int64 = 0,
        bundleIdentifier: String,
        kind: Kind,
        url: String? = nil,
        mailbox: String? = nil,
        originalName: String? = nil,
        extensionChain: String? = nil,
        containerPath: String? = nil,
        finalPath: String? = nil,
        finalDevice: UInt64? = nil,
        finalInode: UInt64? = nil,
        temporaryPath: String? = nil,
        contentType: String? = nil,
        size: Int64? = nil,
        sha256: String? = nil,
        sourceApplication: String? = nil,
        annotation: String? = nil,
        state: State,
        sourcePath: FilePath? = nil,
        sourceDevice: UInt64? = nil,
        sourceInode: UInt64? = nil,
        sourceSize: Int64? = nil,
        sourceMtimeNs: Int64? = nil,
        messageID: String? = nil,
        partPath: String? = nil,
        createdAt: Date = Date(),
        committedAt: Date? = nil,
        acknowledgedAt: Date? = nil,
        sourceRemovedAt: Date? = nil,
        requesterUID: UInt32? = nil,
        seenAt: Date? = nil,
        inbox: String? = nil,
        mimeType: String? = nil,
        typedBy: String? = nil,
        routedBy: String? = nil,
        notifiedAt: Date? = nil,
        notifiedBy: String? = nil,
        notifiedTo: String? = nil
    ) {
        self.deliveryID = deliveryID
        self.sequence = sequence
        self.bundleIdentifier = bundleIdentifier
        self.kind = kind
        self.url = url
        self.mailbox = mailbox
        self.originalName = originalName
        self.extensionChain = extensionChain
        self.containerPath = containerPath
        self.finalPath = finalPath
        self.finalDevice = finalDevice
        self.finalInode = finalInode
        self.temporaryPath = temporaryPath
        self.contentType = contentType
        self.size = size
        self.sha256 = sha256
        self.sourceApplication = sourceApplication
        self.annotation = annotation
        self.state = state
        self.sourcePath = sourcePath
        self.sourceDevice = sourceDevice
        self.sourceInode = sourceInode
        self.sourceSize = sourceSize
        self.sourceMtimeNs = sourceMtimeNs
        self.messageID = messageID
        self.partPath = partPath
        self.createdAt = createdAt
        self.committedAt = committedAt
        self.acknowledgedAt = acknowledgedAt
        self.sourceRemovedAt = sourceRemovedAt
        self.requesterUID = requesterUID
        self.seenAt = seenAt
        self.inbox = inbox
        self.mimeType = mimeType
        self.typedBy = typedBy
        self.routedBy = routedBy
        self.notifiedAt = notifiedAt
        self.notifiedBy = notifiedBy
        self.notifiedTo = notifiedTo
    }

    /// The URL a handler is sent: for a file `file://` and the percent-encoded ``finalPath``
    /// (RFC 3986), for a URL delivery ``url``.
    package var eventURL: String? {
        switch kind {
        case .url: return url
        case .file: return finalPath.map { URL(fileURLWithPath: $0, isDirectory: false).absoluteString }
        }
    }
}
