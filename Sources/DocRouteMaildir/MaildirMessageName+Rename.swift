import DocRoutePlatform
import SystemPackage

extension MaildirMessageName {
    /// What ``markRead(_:newFolder:curFolder:separator:describing:)`` did.
    package enum MarkReadOutcome: Sendable, Hashable {
        /// The message is now `cur/<name>`.
        case moved(to: [UInt8])
        /// It was no longer in `new/` (a mail client took it first): nothing to do.
        case vanished
        /// `cur/` already has a message by the read name; the message was left in `new/`.
        case nameTaken([UInt8])
    }

    /// Moves message `name` from `new/` to `cur/` under its read name (``readName(_:separator:)``),
    /// never replacing a file there. The message's bytes are untouched.
    ///
    /// The rename is not flushed to disk: if a crash loses it, the message is in `new/` again and,
    /// its attachments being recorded as delivered, is simply marked read again.
    ///
    /// - Parameters:
    ///   - newFolder: the mailbox's `new/`, open.
    ///   - curFolder: the mailbox's `cur/`, open.
    ///   - describing: the message's path, for errors.
    /// - Throws: ``DeliveryError`` when the rename fails for another reason (permissions, read-only).
    package static func markRead(
        _ name: [UInt8],
        newFolder: FileDescriptor,
        curFolder: FileDescriptor,
        separator: UInt8 = standardSeparator,
        describing: @autoclosure () -> String
    ) throws -> MarkReadOutcome {
        let target = readName(name, separator: separator)
        // A name from readdir is one component; anything else was never a message in `new/`.
        guard let from = FilePath.Component(platformBytes: name) else { return .vanished }
        guard let to = FilePath.Component(platformBytes: target) else {
            throw DeliveryError(errno: .invalidArgument, operation: "mark read (move to cur/)", path: describing())
        }
        do throws(Errno) {
            return try newFolder.renameNoReplace(from, to: to, in: curFolder) ? .moved(to: target) : .nameTaken(target)
        } catch .noSuchFileOrDirectory {
            return .vanished
        } catch {
            throw DeliveryError(errno: error, operation: "mark read (move to cur/)", path: describing())
        }
    }
}
