import CDocRouteShim
import DocRoutePlatform
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

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
        let result: Int32 = (name + [0]).withUnsafeBufferPointer { from in
            (target + [0]).withUnsafeBufferPointer { to in
                from.withMemoryRebound(to: CChar.self) { cFrom in
                    to.withMemoryRebound(to: CChar.self) { cTo in
                        while true {
                            let status = docroute_rename_noreplace(newFolder.rawValue, cFrom.baseAddress!, curFolder.rawValue, cTo.baseAddress!)
                            if status == 0 { return 0 }
                            if errno != EINTR { return errno }
                        }
                    }
                }
            }
        }
        switch result {
        case 0: return .moved(to: target)
        case ENOENT: return .vanished
        case EEXIST: return .nameTaken(target)
        default: throw DeliveryError(errno: Errno(rawValue: result), operation: "mark read (move to cur/)", path: describing())
        }
    }
}
