import SystemPackage

/// Why a delivery, a ledger operation or a quarantine move failed.
///
/// Every error names what it was doing and on which path, carries the `errno` when a system call
/// failed, and says what to do about it. `code` is stable: tests, metrics and tools match on it,
/// never on `message`.
package struct DeliveryError: Error, CustomStringConvertible {
    /// Stable error codes.
    package enum Code: String, Sendable, Hashable, Codable {
        /// The destination file system is full or a quota is reached (ENOSPC, EDQUOT).
        case noSpace = "no-space"
        /// docrouted may not read, write or create there (EACCES, EPERM).
        case permissionDenied = "permission-denied"
        /// The file system holding the destination is mounted read-only (EROFS).
        case readOnly = "read-only"
        /// A symbolic link stands where a folder or a file was expected; it is never followed.
        case symbolicLink = "symbolic-link"
        /// The source is not a regular file (a folder, device, socket or FIFO).
        case notRegularFile = "not-regular-file"
        /// Something that should be a folder is not one (and is not a symbolic link either).
        case notDirectory = "not-directory"
        /// The file or folder no longer exists (ENOENT).
        case vanished
        /// The source changed (grew, shrank or was rewritten) while it was copied.
        case changed
        /// A sandbox folder was moved away (by its handler) while a copy was written into it.
        case moved
        /// The file is larger than the destination accepts (EFBIG).
        case tooLarge = "too-large"
        /// A name (mailbox, file) cannot be used, even after sanitising.
        case invalidName = "invalid-name"
        /// Every candidate name for the file was taken.
        case nameExhausted = "name-exhausted"
        /// The delivery ledger (SQLite) could not be read or written.
        case ledger
        /// The delivery ledger is damaged, gone or replaced: docrouted does not run on it.
        case ledgerDamaged = "ledger-damaged"
        /// Any other input/output failure.
        case io
    }

    /// What went wrong, stable.
    package var code: Code
    /// What happened and what to do about it, for people.
    package var message: String
    /// The `errno` of the failed system call, if one failed.
    package var errno: Errno?
    /// The file or folder concerned, if any.
    package var path: String?
    /// The underlying error (a database error for example), if any.
    package var cause: (any Error)?
    /// Where in docrouted the error was raised.
    package var file: String
    /// Where in docrouted the error was raised.
    package var line: Int

    /// Creates an error.
    package init(
        code: Code,
        message: String,
        errno: Errno? = nil,
        path: String? = nil,
        cause: (any Error)? = nil,
        file: String = #fileID,
        line: Int = #line
    ) {
        self.code = code
        self.message = message
        self.errno = errno
        self.path = path
        self.cause = cause
        self.file = file
        self.line = line
    }

    /// An error for a failed system call: the code follows from `errno`, the message names the
    /// operation, the path, the system's text and what to do.
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
            message: "\(subject): \(errno.description). \(Self.advice(for: code))",
            errno: errno,
            path: path,
            file: file,
            line: line
        )
    }

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
    package static func advice(for code: Code) -> String {
        switch code {
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
        }
    }

    /// `code: message`, then the cause if there is one.
    package var description: String {
        var text = "\(code.rawValue): \(message)"
        if let cause { text += " (cause: \(cause))" }
        return text
    }

    /// Whether trying again later can succeed: a full disk, a permission or read-only problem an
    /// administrator can fix, a busy ledger. A source changed while it was copied is tried again once it is quiet. A vanished source or a bad name cannot.
    package var isRetryable: Bool {
        switch code {
        case .noSpace, .permissionDenied, .readOnly, .ledger, .io, .notDirectory, .symbolicLink, .changed, .moved: true
        case .vanished, .notRegularFile, .ledgerDamaged, .tooLarge, .invalidName, .nameExhausted: false
        }
    }
}
