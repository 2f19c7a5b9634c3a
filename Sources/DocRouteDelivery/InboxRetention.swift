import DocRouteLedger
import DocRoutePlatform
import DocRouteProtocol
import Foundation
import Logging
import SystemPackage

/// Removes from a handler's `Documents/Inbox/<mailbox>/` the copies it acknowledged longer ago
/// than its manifest's `DocRouteInboxRetentionDays`, so that a sandbox whose handler leaves its
/// documents where they were delivered does not grow without end.
///
/// Only what the ledger knows it delivered there and the handler acknowledged: never a copy still
/// owed (committed), declined or staged, nor any other file of the sandbox. The name must still
/// hold the very file renamed into place (its device and inode, as the ledger recorded them):
/// a copy the handler moved away or replaced is noted as settled and left alone. Every folder is
/// opened from the container root one name at a time with `O_NOFOLLOW`, so a symbolic link the
/// handler put on the way is never followed; a package's folder is removed whole the same way.
///
/// Blocking: run it on a thread that may block.
package struct InboxRetention: Sendable {
    /// What one sweep of one handler did.
    package struct Report: Sendable, Hashable {
        /// The copies removed, by path.
        package var removed: [String] = []
        /// Their bytes, as the ledger recorded them.
        package var removedBytes: Int64 = 0
        /// Copies that were no longer there as delivered (moved away, replaced, their folder gone): settled, nothing removed.
        package var settledAlready = 0
        /// Copies that could not be removed, with why; tried again at the next sweep.
        package var failures: [String] = []
    }

    let ledger: any RetentionLedger
    let logger: Logger
    /// Rows read and settled per ledger transaction.
    static let pageSize = 256

    package init(ledger: any RetentionLedger, logger: Logger) {
        self.ledger = ledger
        self.logger = logger
    }

    /// Removes `bundleIdentifier`'s acknowledged copies acknowledged before `cutoff`, and notes
    /// each settled copy in the ledger once its removal is on disk.
    package func sweep(_ bundleIdentifier: String, acknowledgedBefore cutoff: Date) -> Report {
        var report = Report()
        var position: RetentionPosition?
        repeat {
            let page: (copies: [AcknowledgedCopy], next: RetentionPosition?)
            do {
                page = try ledger.acknowledgedCopies(of: bundleIdentifier, acknowledgedBefore: cutoff, after: position, limit: Self.pageSize)
            } catch {
                report.failures.append("\(error)")
                return report
            }
            var folders = OpenFolders()
            var settled: [UUID] = []
            for copy in page.copies {
                switch remove(copy, folders: &folders) {
                case .removed:
                    settled.append(copy.deliveryID)
                    report.removed.append(copy.finalPath)
                    report.removedBytes += copy.size ?? 0
                    logger.info("removed an acknowledged copy past its retention", metadata: [
                        "bundle-id": "\(bundleIdentifier)", "delivery-id": "\(copy.deliveryID.protocolText)", "path": "\(copy.finalPath)",
                        "acknowledged": "\(UTCTimestamp(copy.acknowledgedAt).ledgerText)", "size": "\(copy.size ?? 0)",
                    ])
                case .notThere(let why):
                    settled.append(copy.deliveryID)
                    report.settledAlready += 1
                    logger.debug("an acknowledged copy past its retention is not there as delivered; left alone", metadata: [
                        "bundle-id": "\(bundleIdentifier)", "delivery-id": "\(copy.deliveryID.protocolText)", "path": "\(copy.finalPath)", "reason": "\(why)",
                    ])
                case .failed(let error):
                    report.failures.append("\(copy.finalPath): \(error)")
                }
            }
            // The removals reach the disk before the ledger says so: a copy noted settled and
            // brought back by a power cut would stay in the sandbox for good.
            if let error = folders.syncAndClose() {
                report.failures.append(error)
                return report
            }
            do {
                try ledger.markCopiesSettled(settled, at: Date())
            } catch {
                report.failures.append("\(error)")
                return report
            }
            position = page.next
        } while position != nil
        return report
    }

    enum Outcome {
        case removed
        case notThere(String)
        case failed(String)
    }

    /// The mailbox folders one page opened, by path; synced when something was removed in them.
    struct OpenFolders {
        var open: [String: (descriptor: FileDescriptor, changed: Bool)] = [:]

        mutating func syncAndClose() -> String? {
            var failure: String?
            for (path, folder) in open {
                if folder.changed, failure == nil {
                    do throws(Errno) { try folder.descriptor.sync() } catch { failure = "sync \(path): \(error)" }
                }
                folder.descriptor.closeIgnoringErrors()
            }
            open = [:]
            return failure
        }
    }

    /// Removes one copy if its name still holds it, walking from the container root.
    func remove(_ copy: AcknowledgedCopy, folders: inout OpenFolders) -> Outcome {
        // Only `<container>/Documents/Inbox/<mailbox>/<name>`, as the delivery wrote it.
        guard copy.finalPath.hasPrefix(copy.containerPath + "/") else { return .notThere("not below its container") }
        let parts = copy.finalPath.dropFirst(copy.containerPath.count + 1).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 4, parts[0] == "Documents", parts[1] == "Inbox",
              let mailboxName = FilePath.Component(parts[2]), mailboxName.kind == .regular,
              let name = FilePath.Component(parts[3]), name.kind == .regular
        else { return .notThere("not in Documents/Inbox/<mailbox>/") }
        guard let device = copy.finalDevice, let inode = copy.finalInode else {
            return .notThere("the ledger has no device and inode to recognise it by")
        }
        let mailboxPath = copy.containerPath + "/Documents/Inbox/" + parts[2]
        let mailbox: FileDescriptor
        if let folder = folders.open[mailboxPath] {
            mailbox = folder.descriptor
        } else {
            switch Self.openMailbox(container: copy.containerPath, mailbox: mailboxName) {
            case .success(let opened):
                mailbox = opened
                folders.open[mailboxPath] = (opened, false)
            case .failure(.noSuchFileOrDirectory):
                return .notThere("its folder is gone")
            case .failure(.tooManySymbolicLinkLevels), .failure(.notDirectory):
                return .notThere("a folder on its way is a symbolic link or not a folder")
            case .failure(let errno):
                return .failed("open \(mailboxPath): \(errno)")
            }
        }
        do throws(Errno) {
            guard let found = try mailbox.status(of: name) else { return .notThere("moved away") }
            guard found.device == device, found.inode == inode else { return .notThere("another file has its name") }
            if found.isDirectory {
                do {
                    try PackageTree.remove(Array(parts[3].utf8), in: mailbox.rawValue, describing: copy.finalPath)
                } catch {
                    return .failed("\(error)")
                }
            } else {
                guard try mailbox.unlink(name) else { return .notThere("moved away") }
            }
            folders.open[mailboxPath]?.changed = true
            return .removed
        } catch {
            return .failed("remove \(copy.finalPath): \(error)")
        }
    }

    /// `<container>/Documents/Inbox/<mailbox>`, one name at a time, never through a symbolic link.
    static func openMailbox(container: String, mailbox: FilePath.Component) -> Result<FileDescriptor, Errno> {
        var current: FileDescriptor
        do throws(Errno) {
            current = try FileDescriptor.openDirectory(atPath: FilePath(container))
        } catch {
            return .failure(error)
        }
        let path = FilePath("Documents/Inbox").appending(mailbox)
        for name in path.components {
            do throws(Errno) {
                let next = try current.openDirectory(name)
                current.closeIgnoringErrors()
                current = next
            } catch {
                current.closeIgnoringErrors()
                return .failure(error)
            }
        }
        return .success(current)
    }
}
