import DocRouteHandlers
import DocRouteIntake
import DocRouteLedger
import DocRoutePlatform
import Foundation
import SystemPackage

extension DeliveryBatch {
    /// What ``DeliveryBatch/recover(containerRoots:)`` settled.
    package struct RecoveryReport: Sendable {
        /// Staged deliveries whose copies were complete: now committed (and owed to handlers).
        package var committed: [LedgerRecord] = []
        /// Staged deliveries whose copies were gone: their rows removed; their sources are still
        /// in the inboxes and are delivered again.
        package var discarded: [UUID] = []
        /// Leftover `.docroute-*.tmp` files and `.docroute-tmp-*` package folders removed from mailbox folders.
        package var temporariesRemoved = 0
        /// Sources of committed deliveries that a crash had left in their inboxes, now removed.
        package var sourcesRemoved = 0
    }

    /// Settles whatever a crash interrupted. Run it at start, before any delivery or dispatch.
    ///
    /// 1. Each `staged` row: if the final name already holds the copy (same device, inode, size
    ///    and SHA-256), it is committed; if the synced temporary is still there (checked the same
    ///    way), it is renamed to its final name now (the next free one if that was taken) and
    ///    committed; if neither, the row is removed and the source, still in its inbox, is
    ///    delivered again later. A staged package (its temporary a `.docroute-tmp-*` folder) is
    ///    committed when its final folder holds the staged tree (device, inode, size and digest),
    ///    otherwise its temporary folder and row are removed.
    /// 2. Leftover temporaries (files, and package folders, removed whole) in the `Documents/Inbox/*/` folders of `containerRoots` (and of
    ///    the containers the staged rows name) are removed.
    /// 3. A committed delivery's source still in its inbox (same path, device, inode, size and
    ///    modification time) is removed.
    ///
    /// - Throws: ``DeliveryError`` when the ledger cannot be read or written, or a folder holding a
    ///   recovered copy cannot be synced; the daemon should not start then.
    package func recover(containerRoots: [FilePath]) throws -> RecoveryReport {
        try serial.withLock { _ in
            var report = RecoveryReport()
            let staged = try ledger.stagedRecords()
            try settle(staged, into: &report)
            var roots = Set(containerRoots)
            for record in staged { if let container = record.containerPath { roots.insert(FilePath(container)) } }
            for root in roots.sorted(by: { $0.string < $1.string }) {
                report.temporariesRemoved += removeTemporaries(below: root)
            }
            report.sourcesRemoved = try removeDeliveredSources()
            if !report.committed.isEmpty || !report.discarded.isEmpty || report.temporariesRemoved > 0 || report.sourcesRemoved > 0 {
                logger.notice("recovered after an interrupted delivery", metadata: [
                    "committed": "\(report.committed.count)", "discarded": "\(report.discarded.count)",
                    "temporariesRemoved": "\(report.temporariesRemoved)", "sourcesRemoved": "\(report.sourcesRemoved)",
                ])
            }
            return report
        }
    }

    private func settle(_ staged: [LedgerRecord], into report: inout RecoveryReport) throws {
        guard !staged.isEmpty else { return }
        var folders: [FolderKey: Result<SandboxWriter.Folder, DeliveryError>] = [:]
        defer { for case .success(let folder) in folders.values { folder.close() } }
        var expectedNames: [FolderKey: Set<String>] = [:]
        for record in staged {
            guard let container = record.containerPath, let mailbox = record.mailbox,
                  let finalName = record.finalPath.flatMap({ FilePath($0).lastComponent?.string }) else { continue }
            expectedNames[FolderKey(root: FilePath(container), mailbox: mailbox), default: []].insert(finalName)
        }
        var placed: [LedgerRecord] = []
        var syncFolders: [FolderKey] = []
        for var record in staged {
            guard let container = record.containerPath, let mailbox = record.mailbox,
                  let finalPath = record.finalPath, let temporaryPath = record.temporaryPath,
                  let finalName = FilePath(finalPath).lastComponent,
                  let temporaryName = FilePath(temporaryPath).lastComponent
            else {
                report.discarded.append(record.deliveryID)
                continue
            }
            let key = FolderKey(root: FilePath(container), mailbox: mailbox)
            if folders[key] == nil {
                folders[key] = Result {
                    try writer.openFolder(root: key.root, components: ["Documents", "Inbox", mailbox], owner: nil, create: false)
                }.mapError { DeliveryError.wrapping("open the mailbox folder", $0) }
            }
            let folder: SandboxWriter.Folder
            switch folders[key]! {
            case .success(let opened): folder = opened
            case .failure(let error):
                logger.warning("a staged delivery's mailbox folder cannot be opened; its source is delivered again", metadata: [
                    "delivery": "\(record.deliveryID)", "error": "\(error)",
                ])
                report.discarded.append(record.deliveryID)
                continue
            }
            if Self.isPackageTemporary(temporaryName.string) {
                // A package: commit it if its final folder holds our tree; otherwise drop the row
                // and the temporary folder (the source, still in its inbox, is delivered again).
                if try isOurPackage(finalName, in: folder, record: record) {
                    placed.append(record)
                    if !syncFolders.contains(key) { syncFolders.append(key) }
                } else {
                    try? PackageTree.remove(Array(temporaryName.string.utf8), in: folder.descriptor.rawValue, describing: temporaryPath)
                    logger.info("a staged package's copy is not in place; its source is delivered again", metadata: [
                        "delivery": "\(record.deliveryID)", "final": "\(finalPath)",
                    ])
                    report.discarded.append(record.deliveryID)
                }
                continue
            }
            // Our copy: the recorded inode (a rename keeps it), size and bytes. The inode alone is
            // not enough: the handler may delete the temporary and a new file of its own can get
            // the freed inode number.
            let isOurCopy = { (name: FilePath.Component, path: String) throws -> Bool in
                guard let status = try DeliveryError.performing("inspect", path, { try folder.descriptor.status(of: name) }), status.isRegularFile,
                      status.inode == record.finalInode, status.device == record.finalDevice, status.size == record.size
                else { return false }
                return try self.writer.sha256(of: name.string, in: folder) == record.sha256
            }
            if try isOurCopy(finalName, finalPath) {
                placed.append(record)
            } else if try isOurCopy(temporaryName, temporaryPath) {
                var name = finalName.string
                let sandboxName = SandboxName(original: record.originalName ?? name, extensionChain: record.extensionChain ?? "")
                var counter = 0
                while try !writer.place(temporaryName.string, as: name, in: folder) {
                    (name, counter) = try writer.firstFreeName(sandboxName, in: folder, from: counter + 1, excluding: expectedNames[key] ?? [])
                    expectedNames[key, default: []].insert(name)
                    record.finalPath = folder.path(of: name).string
                    try ledger.updateFinalPath(deliveryID: record.deliveryID, finalPath: record.finalPath!)
                }
                placed.append(record)
            } else {
                logger.info("a staged delivery's copy is gone; its source is delivered again", metadata: [
                    "delivery": "\(record.deliveryID)", "final": "\(finalPath)",
                ])
                report.discarded.append(record.deliveryID)
                continue
            }
            if !syncFolders.contains(key) { syncFolders.append(key) }
        }
        for key in syncFolders {
            guard case .success(let folder) = folders[key] else { continue }
            try DeliveryError.performing("sync", folder.path.string) { try folder.descriptor.sync() }
        }
        let now = Date()
        let sequences = try ledger.commit(placed.map(\.deliveryID), discarding: report.discarded, at: now)
        for var record in placed {
            guard let sequence = sequences[record.deliveryID] else { continue }
            record.sequence = sequence
            record.state = .committed
            record.committedAt = now
            record.temporaryPath = nil
            report.committed.append(record)
        }
    }

    /// Whether `name` in `folder` is the package folder `record` staged: same device, inode,
    /// total size and tree digest.
    private func isOurPackage(_ name: FilePath.Component, in folder: SandboxWriter.Folder, record: LedgerRecord) throws -> Bool {
        let path = folder.path.appending(name).string
        guard let status = try DeliveryError.performing("inspect", path, { try folder.descriptor.status(of: name) }), status.isDirectory,
              status.device == record.finalDevice, status.inode == record.finalInode else { return false }
        let opened = try PackageTree.openFolder(name, in: folder.descriptor.rawValue, describing: path)
        defer { FileDescriptor(rawValue: opened).closeIgnoringErrors() }
        // Read no further than the size staged: the handler owns the folder and may have added a
        // file of any size to it (a sparse 16 TiB one costs nothing to make), and the daemon
        // cannot start until this is settled.
        do {
            let digest = try PackageTree.digest(of: opened, describing: path, sizeLimit: record.size)
            return digest.size == record.size && digest.sha256 == record.sha256
        } catch is PackageTree.LargerThanExpected {
            return false
        }
    }

    /// Removes our temporaries in every `Documents/Inbox/<mailbox>/` of a container. Called when
    /// no staged row is left, so none of them can still be needed.
    private func removeTemporaries(below root: FilePath) -> Int {
        let inbox: SandboxWriter.Folder
        do {
            inbox = try writer.openFolder(root: root, components: ["Documents", "Inbox"], owner: nil, create: false)
        } catch let error as DeliveryError where error.code == .vanished {
            return 0
        } catch {
            logger.warning("cannot look for leftover temporaries", metadata: ["container": "\(root.string)", "error": "\(error)"])
            return 0
        }
        defer { inbox.close() }
        var removed = 0
        do {
            for mailboxName in try DeliveryError.performing("list folder", inbox.path.string, { try inbox.descriptor.directoryNames() }) {
                let mailboxPath = inbox.path.appending(mailboxName)
                // Only real folders: a link or a file in Inbox is not a mailbox to clean.
                guard let mailbox = try? inbox.descriptor.open(mailboxName, .readOnly, options: [.directory]) else { continue }
                defer { mailbox.closeIgnoringErrors() }
                var removedHere = 0
                for name in try DeliveryError.performing("list folder", mailboxPath.string, { try mailbox.directoryNames() }) {
                    if SandboxWriter.isTemporaryName(name.string) {
                        if try DeliveryError.performing("remove", mailboxPath.appending(name).string, { try mailbox.unlink(name) }) { removedHere += 1 }
                    } else if Self.isPackageTemporary(name.string) {
                        // A package's temporary folder: removed whole, never following a link.
                        try PackageTree.remove(Array(name.string.utf8), in: mailbox.rawValue, describing: mailboxPath.appending(name).string)
                        removedHere += 1
                    }
                }
                if removedHere > 0 { try DeliveryError.performing("sync", mailboxPath.string, { try mailbox.sync() }) }
                removed += removedHere
            }
        } catch {
            logger.warning("could not remove every leftover temporary", metadata: ["container": "\(root.string)", "error": "\(error)"])
        }
        return removed
    }

    /// What a crash left under a delivery's hidden name in its inbox while its source was being
    /// removed there (``SourceReclaimer/removeWithinInbox(_:in:expected:deliveryID:describing:logger:)``,
    /// an inbox with no reclaim folder on its file system): the source itself is removed (true);
    /// another file, renamed over the source's name after the copy and taken aside before it was
    /// checked, goes back under that name, or beside it, to be delivered (false, as when nothing
    /// is there). Intake passes over hidden names, so it would otherwise wait there unseen.
    private func settleTakenAside(_ record: LedgerRecord, name: FilePath.Component, in folder: FileDescriptor, path: FilePath) throws -> Bool {
        guard record.sourceSize != Self.packageSourceMarker else { return false }  // packages are removed otherwise
        let aside = SourceReclaimer.removingName(record.deliveryID)
        let asidePath = path.removingLastComponent().appending(aside).string
        guard let found = try DeliveryError.performing("inspect", asidePath, { try folder.status(of: aside) }) else { return false }
        if !SourceReclaimer.isNot(record, found) {
            try DeliveryError.performing("remove", asidePath) { _ = try folder.unlink(aside) }
            return true
        }
        try SourceReclaimer.returnTakenByMistake(aside, from: folder, as: name, in: folder, of: record, logger: logger)
        return false
    }

    /// Removes sources of committed deliveries still in their inboxes; notes every source found
    /// settled (removed now, gone already, or replaced by another file).
    private func removeDeliveredSources() throws -> Int {
        let records = try ledger.recordsWithSourcesKept()
        guard !records.isEmpty else { return 0 }
        var folders: [FilePath: FileDescriptor] = [:]
        var goneFolders: Set<FilePath> = []
        var unreadableFolders: Set<FilePath> = []
        defer { for folder in folders.values { folder.closeIgnoringErrors() } }
        var settled: [UUID] = []
        var removedIn: [FilePath: [UUID]] = [:]
        for record in records {
            guard let path = record.sourcePath, let name = path.lastComponent,
                  let device = record.sourceDevice, let inode = record.sourceInode
            else {
                settled.append(record.deliveryID)
                continue
            }
            let parent = path.removingLastComponent()
            if unreadableFolders.contains(parent) { continue }
            if folders[parent] == nil, !goneFolders.contains(parent) {
                do {
                    folders[parent] = try DeliveryError.performing("open folder", parent.string) { try FileDescriptor.openDirectory(atPath: parent) }
                } catch let error as DeliveryError where error.code == .vanished {
                    goneFolders.insert(parent)
                } catch {
                    logger.warning("cannot open an inbox folder to remove delivered sources", metadata: ["folder": "\(parent.string)", "error": "\(error)"])
                    unreadableFolders.insert(parent)
                    continue
                }
            }
            guard let folder = folders[parent] else {
                settled.append(record.deliveryID)  // The folder is gone, and the source with it.
                continue
            }
            do {
                let found = try DeliveryError.performing("inspect", path.string) { try folder.status(of: name) }
                if record.sourceSize == Self.packageSourceMarker, let found {
                    // A package source: known by path, device and inode (its times change as it is removed).
                    if found.isDirectory, found.device == device, found.inode == inode {
                        try PackageTree.remove(Array(name.string.utf8), in: folder.rawValue, describing: path.string)
                        removedIn[parent, default: []].append(record.deliveryID)
                    } else {
                        settled.append(record.deliveryID)
                    }
                } else if let found,
                   found.device == device, found.inode == inode,
                   found.size == record.sourceSize, found.modificationTimeNanoseconds == record.sourceMtimeNs
                {
                    try DeliveryError.performing("remove", path.string) { try folder.unlink(name) }
                    removedIn[parent, default: []].append(record.deliveryID)
                } else if try settleTakenAside(record, name: name, in: folder, path: path) {
                    removedIn[parent, default: []].append(record.deliveryID)
                } else {
                    settled.append(record.deliveryID)
                }
            } catch {
                logger.warning("cannot remove a delivered source", metadata: ["source": "\(path.string)", "error": "\(error)"])
            }
        }
        var removed = 0
        for (parent, deliveryIDs) in removedIn {
            guard let folder = folders[parent] else { continue }
            do {
                try DeliveryError.performing("sync", parent.string) { try folder.sync() }
                settled += deliveryIDs
                removed += deliveryIDs.count
            } catch {
                logger.warning("cannot sync an inbox folder", metadata: ["folder": "\(parent.string)", "error": "\(error)"])
            }
        }
        try ledger.markSourcesRemoved(settled)
        return removed
    }
}
