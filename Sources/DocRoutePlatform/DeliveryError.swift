import DocRouteErrors
import SystemPackage

/// Why a delivery, a ledger operation or a quarantine move failed.
///
/// Every error names what it was doing and on which path, carries the `errno` as its `cause` when
/// a system call failed, and says what to do about it. `code` is stable: tests, metrics and tools
/// match on it, never on `message`.
///
/// It lives in Platform, not Delivery: Platform's own writes (`AtomicFile`, ``performing(_:_:file:line:_:)``)
/// throw it, and the ledger, whose only daemon dependency is Platform, throws it too.
package typealias DeliveryError = DocRouteError<DeliveryErrorCode>

/// The stable codes of ``DeliveryError``.
package struct DeliveryErrorCode: ErrorCodeProtocol {
    private enum Known: String {
        case noSpace = "no-space"
        case permissionDenied = "permission-denied"
        case readOnly = "read-only"
        case symbolicLink = "symbolic-link"
        case notRegularFile = "not-regular-file"
        case notDirectory = "not-directory"
        case vanished
        case changed
        case moved
        case copyRemoved = "copy-removed"
        case tooLarge = "too-large"
        case invalidName = "invalid-name"
        case nameExhausted = "name-exhausted"
        case ledger
        case ledgerDamaged = "ledger-damaged"
        case io
        case overLimit = "over-limit"
    }

    private let known: Known
    private init(_ known: Known) { self.known = known }
    /// The code's text, e.g. `no-space`.
    package var rawValue: String { known.rawValue }

    /// The destination file system is full or a quota is reached (ENOSPC, EDQUOT).
    package static let noSpace = Self(.noSpace)
    /// docrouted may not read, write or create there (EACCES, EPERM).
    package static let permissionDenied = Self(.permissionDenied)
    /// The file system holding the destination is mounted read-only (EROFS).
    package static let readOnly = Self(.readOnly)
    /// A symbolic link stands where a folder or a file was expected; it is never followed.
    package static let symbolicLink = Self(.symbolicLink)
    /// The source is not a regular file (a folder, device, socket or FIFO).
    package static let notRegularFile = Self(.notRegularFile)
    /// Something that should be a folder is not one (and is not a symbolic link either).
    package static let notDirectory = Self(.notDirectory)
    /// The file or folder no longer exists (ENOENT).
    package static let vanished = Self(.vanished)
    /// The source changed (grew, shrank or was rewritten) while it was copied.
    package static let changed = Self(.changed)
    /// A sandbox folder was moved away (by its handler) while a copy was written into it.
    package static let moved = Self(.moved)
    /// docrouted's temporary copy (or the folder holding it) was removed from the sandbox, by its
    /// handler, before the copy got its final name: the source is still there to copy again.
    package static let copyRemoved = Self(.copyRemoved)
    /// The file is larger than the destination accepts (EFBIG).
    package static let tooLarge = Self(.tooLarge)
    /// A name (mailbox, file) cannot be used, even after sanitising.
    package static let invalidName = Self(.invalidName)
    /// Every candidate name for the file was taken.
    package static let nameExhausted = Self(.nameExhausted)
    /// The delivery ledger (SQLite) could not be read or written.
    package static let ledger = Self(.ledger)
    /// The delivery ledger is damaged, gone or replaced: docrouted does not run on it.
    package static let ledgerDamaged = Self(.ledgerDamaged)
    /// Any other input/output failure.
    package static let io = Self(.io)
    /// The handler (or the user who asked) has as many deliveries waiting unacknowledged as
    /// docrouted keeps (`max_pending_*`): nothing was copied.
    package static let overLimit = Self(.overLimit)

    /// Whether trying again later can succeed: a full disk, a permission or read-only problem an
    /// administrator can fix, a busy ledger. A source changed while it was copied is tried again once it is quiet, and so is
    /// one whose copy a handler removed from its sandbox (``copyRemoved``). A vanished source or a bad name cannot.
    package var isRetryable: Bool {
        switch known {
        case .noSpace, .permissionDenied, .readOnly, .ledger, .io, .notDirectory, .symbolicLink, .changed, .moved, .copyRemoved, .overLimit: true
        case .vanished, .notRegularFile, .ledgerDamaged, .tooLarge, .invalidName, .nameExhausted: false
        }
    }

    /// `code: message`, then the cause if there is one. An `errno` cause is left out: the
    /// message of a failed system call already says it in words.
    package static func describe(_ error: DeliveryError) -> String {
        var text = "\(error.code.rawValue): \(error.message)"
        if let cause = error.cause, !(cause is Errno) { text += " (cause: \(cause))" }
        return text
    }

    /// What an administrator should do about an error with this code.
    package var advice: String {
        switch known {
        case .noSpace:
            "Free space or raise the quota on that file system; the source stays in its inbox and is delivered when there is room."
        case .permissionDenied:
            "Check the owner and mode of the folder: docrouted must be able to create files there."
        case .readOnly:
            "Remount the file system read-write; the source stays in its inbox."
        case .symbolicLink:
            "docrouted never follows a symbolic link inside a sandbox or an inbox; replace the link with a real folder."
        case .notRegularFile:
            "Only regular files are delivered; move it out of the inbox."
        case .notDirectory:
            "Replace it with a folder."
        case .vanished:
            "It was removed or renamed meanwhile; if it was the source, nothing was delivered and nothing is lost."
        case .changed:
            "The source was still being written; it stays in its inbox and is delivered once nobody has changed it for a few seconds."
        case .moved:
            "The handler moved its mailbox folder out of its container during the copy; docrouted re-creates the mailbox and delivers the source (still in its inbox) again."
        case .copyRemoved:
            "The handler removed docrouted's temporary copy (.docroute-*.tmp) or its mailbox folder while the copy was made; the source stays in its inbox and is delivered again. A handler must leave docrouted's temporary files alone."
        case .tooLarge:
            "The destination file system does not accept files this large."
        case .invalidName:
            "Rename the file or folder."
        case .nameExhausted:
            "Clean up the handler's Inbox folder."
        case .ledger:
            "Check that the state directory is writable and its disk healthy; nothing was reported delivered."
        case .ledgerDamaged:
            "To recover: stop the service (systemctl stop docroute); run `docrouted --recover-ledger` with the same --config (it keeps the damaged files beside it as ledger.sqlite.damaged-<time>, and rebuilds the ledger from the sandboxes: their paths, sizes and SHA-256 digests; a document the old ledger cannot say was acknowledged is announced to its handler again); then start the service (systemctl start docroute)."
        case .io:
            "Check the disk and the kernel log (journalctl -k)."
        case .overLimit:
            "Nothing was copied: an inbox's file stays in its inbox and is tried again at least once a minute, an `open` can be sent again later. Room is made as the handler acknowledges what it is owed (`docroutectl status` shows each handler's pending count); raise the max_pending_* limits in docroute.toml if it is meant to fall that far behind."
        }
    }
}

extension DocRouteError where Code == DeliveryErrorCode {
    /// An error for a failed system call: the code follows from `errno`, the message names the
    /// operation, the path, the system's text and what to do; the `errno` is the cause.
    package init(
        errno: Errno,
        operation: String,
        path: String?,
        file: String = #fileID,
        line: Int = #line
    ) {
        let code = Self.code(for: errno)
        let subject = path.map { "\(operation) \($0)" } ?? operation
        self.init(
            code: code,
            message: "\(subject): \(errno.description). \(code.advice)",
            cause: errno,
            file: file,
            line: line
        )
    }

    /// The `errno` of the failed system call, if one failed.
    package var errno: Errno? { cause as? Errno }

    /// Whether trying again later can succeed; see ``DeliveryErrorCode/isRetryable``.
    package var isRetryable: Bool { code.isRetryable }

    /// The code that an `errno` stands for.
    package static func code(for errno: Errno) -> Code {
        switch errno {
        case .noSpace, .diskQuotaExceeded: .noSpace
        case .permissionDenied, .notPermitted: .permissionDenied
        case .readOnlyFileSystem: .readOnly
        case .tooManySymbolicLinkLevels: .symbolicLink
        case .noSuchFileOrDirectory: .vanished
        case .notDirectory: .notDirectory
        case .fileTooLarge, .overflow: .tooLarge
        case .fileNameTooLong, .invalidArgument: .invalidName
        default: .io
        }
    }

    /// What an administrator should do about an error with this code.
    package static func advice(for code: Code) -> String { code.advice }
}
