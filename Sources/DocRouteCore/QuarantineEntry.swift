import Foundation
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// Quarantines an inbox entry by name: a regular file through ``Quarantine`` (copied if it must
/// cross file systems), anything else (a link, a FIFO, a device) by renaming the entry itself,
/// which never follows or opens it.
enum QuarantineEntry {
    static func move(name: [UInt8], in folder: Int32, to directory: String, mailbox: String, reason: String, origin: String?, quarantine: Quarantine) throws {
        let cName = name.map { CChar(bitPattern: $0) } + [0]
        let fd = openat(folder, cName, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        if fd >= 0 {
            defer { close(fd) }
            var info = stat()
            if fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG {
                let status = FileStatus(
                    device: UInt64(info.st_dev), inode: UInt64(info.st_ino), mode: UInt32(info.st_mode), linkCount: UInt64(info.st_nlink),
                    userID: info.st_uid, groupID: info.st_gid, size: Int64(info.st_size),
                    modificationTimeNanoseconds: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec))
                try quarantine.quarantine(
                    source: FileDescriptor(rawValue: fd), sourceStatus: status, sourcePath: FilePath(InboxNames.display(name)),
                    sourceDirectory: FileDescriptor(rawValue: folder),
                    sourceName: LedgerBackend.component(name),
                    mailbox: mailbox, contentType: nil, reason: reason, origin: origin)
                return
            }
        }
        let target = directory + "/" + (DaemonConfiguration.isValidMailbox(mailbox) ? mailbox : "Inbox")
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        let base = InboxNames.display(name).replacingOccurrences(of: "/", with: "_")
        var candidate = base
        var counter = 0
        var destination: String { target + "/" + candidate }
        while true {
            var info = stat()
            if lstat(destination, &info) != 0 && lstat(destination + ".reason", &info) != 0 { break }
            counter += 1
            candidate = "\(base)-\(counter)"
        }
        var moved = true
        if renameat(folder, cName, AT_FDCWD, destination) != 0 {
            guard errno == EXDEV else {
                throw DeliveryError(code: DeliveryError.code(for: Errno(rawValue: errno)), message: "cannot move \(base) to quarantine", errno: Errno(rawValue: errno), path: destination)
            }
            var info = stat()
            if fstatat(folder, cName, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
                // A package folder is a document: never removed in place of a move.
                throw DeliveryError(code: DeliveryError.code(for: .improperLink),
                                    message: "cannot move the package \(base) to quarantine across file systems; put quarantine_directory on the inbox's file system",
                                    errno: .improperLink, path: destination)
            }
            // A link or a FIFO has no content worth carrying across file systems.
            unlinkat(folder, cName, 0)
            moved = false
        }
        let line = Quarantine.reasonLine(reason: moved ? reason : reason + " (removed: it could not be moved across file systems)", contentType: nil, date: Date(), origin: origin)
        let reasonFD = open(destination + ".reason", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o640)
        if reasonFD >= 0 {
            let bytes = Array(line.utf8)
            _ = bytes.withUnsafeBytes { write(reasonFD, $0.baseAddress, $0.count) }
            fsync(reasonFD)
            close(reasonFD)
        }
        let folderFD = open(target, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folderFD >= 0 {
            fsync(folderFD)
            close(folderFD)
        }
    }
}
