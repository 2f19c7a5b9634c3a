import DocRouteHandlers
import DocRouteIntake
import DocRouteLedger
import DocRoutePlatform
import Foundation
import SystemPackage

extension DeliveryBatch {
    /// What a package delivery is given: intake's ``PackageDelivery``.
    package typealias PackageRequest = PackageDelivery

    /// Temporary folders of package copies are named this plus a UUID; a final name never starts
    /// with a dot, and file temporaries end in `.tmp`, so none of these can be confused.
    package static let packageTemporaryPrefix = ".docroute-tmp-"

    /// The source size and modification time recorded for a package source. A folder's own size
    /// and times change while its tree is removed, so a package source is known by its path,
    /// device and inode alone; this value in both columns also marks the row as a package's.
    package static let packageSourceMarker: Int64 = -1

    /// Whether a staged row's temporary is a package's temporary folder.
    static func isPackageTemporary(_ name: String) -> Bool { name.hasPrefix(packageTemporaryPrefix) }

    /// Delivers one package whole: its tree (regular files and folders only) is copied into a
    /// temporary folder in the mailbox folder, every file and folder fsynced, the ledger row
    /// staged, the folder renamed to its final name without replacing anything (the name rule
    /// of files: `Report.rtfd`, then `Report-1.rtfd`), the mailbox folder fsynced, the row
    /// committed, and then the source tree removed from the inbox bottom-up and the inbox synced.
    ///
    /// A failure before the commit removes the temporary folder and leaves the source. A source
    /// that was committed before (a crash interrupted its removal) is removed, not delivered again.
    package func deliverPackage(_ request: PackageRequest) -> Outcome {
        deliverPackage(request, stoppingAfter: nil)
    }

    /// The steps of a package delivery; tests stop after one to play a crash.
    enum PackageStep: Int, Comparable {
        case copy, stage, place, commit

        static func < (lhs: PackageStep, rhs: PackageStep) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// Delivers, stopping after `lastStep` without cleaning anything up, as a crash would.
    func deliverPackage(_ request: PackageRequest, stoppingAfter lastStep: PackageStep?) -> Outcome {
        serial.withLock { _ in runPackage(request, stoppingAfter: lastStep) }
    }

    private func runPackage(_ request: PackageRequest, stoppingAfter lastStep: PackageStep?) -> Outcome {
        let crashed = Outcome.failed(DeliveryError(code: .io, message: "A test stopped this package delivery."))
        let path = request.sourcePath
        let source: CInt
        do {
            guard let name = PackageTree.component(request.sourceName) else {
                throw DeliveryError(code: .invalidName, message: "\(path): not a name of one file. \(DeliveryError.advice(for: .invalidName))")
            }
            source = try PackageTree.openFolder(name, in: request.sourceFolder.descriptor.rawValue, describing: path)
        } catch {
            return .failed(DeliveryError.wrapping("open the package", error))
        }
        defer { FileDescriptor(rawValue: source).closeIgnoringErrors() }
        let sourceStatus: FileStatus
        do {
            let found = try DeliveryError.performing("inspect", path) { try FileDescriptor(rawValue: source).status() }
            sourceStatus = FileStatus(
                device: found.device, inode: found.inode, mode: found.mode, linkCount: found.linkCount,
                userID: found.userID, groupID: found.groupID,
                size: Self.packageSourceMarker, modificationTimeNanoseconds: Self.packageSourceMarker)
            if let earlier = try ledger.deliveredRecords(forSources: [(sourceStatus, FilePath(request.sourcePath))])[0] {
                removePackageSource(request, status: sourceStatus, deliveryID: earlier.deliveryID)
                return .alreadyDelivered(earlier)
            }
        } catch {
            return .failed(DeliveryError.wrapping("look up the package", error))
        }

        let mailbox = SandboxName.sanitizedComponent(request.mailbox)
        let owner = request.owner.map { SandboxWriter.Owner(userID: $0.uid, groupID: $0.gid) }
        let folder: SandboxWriter.Folder
        do {
            folder = try writer.openFolder(root: FilePath(request.containerRoot), components: ["Documents", "Inbox", mailbox], owner: owner, create: true)
        } catch {
            return .failed(DeliveryError.wrapping("open the mailbox folder", error))
        }
        defer { folder.close() }
        let temporaryName = Self.packageTemporaryPrefix + UUID.random().uuidString.lowercased()
        let temporaryPath = folder.path(of: temporaryName).string
        var staged = false
        var placedName: String?
        do {
            let temporaryComponent = FilePath.Component(temporaryName)!
            let created = try DeliveryError.performing("create folder", temporaryPath) {
                try folder.descriptor.makeDirectory(temporaryComponent, permissions: 0o700)
            }
            // A fresh random name: one already there is not ours.
            guard created else { throw DeliveryError(errno: .fileExists, operation: "create folder", path: temporaryPath) }
            let temporary = try PackageTree.openFolder(temporaryComponent, in: folder.descriptor.rawValue, describing: temporaryPath)
            defer { FileDescriptor(rawValue: temporary).closeIgnoringErrors() }
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: options.bufferSize, alignment: 4096)
            defer { buffer.deallocate() }
            _ = try PackageTree.copy(
                from: source, describing: path, to: temporary, describing: temporaryPath,
                owner: owner, fileMode: writer.fileMode, folderMode: writer.folderMode,
                accessUserID: writer.accessUserID, buffer: buffer, logger: logger)
            let (size, sha256) = try PackageTree.digest(of: temporary, describing: temporaryPath)
            let copy = try DeliveryError.performing("inspect", temporaryPath) { try FileDescriptor(rawValue: temporary).status() }
            if lastStep == .copy { return crashed }

            let name = SandboxName(original: request.originalName, extensionChain: request.extensionChain)
            var (finalName, counter) = try writer.firstFreeName(name, in: folder)
            let originalName = name.original
            var record = LedgerRecord(
                deliveryID: request.deliveryID, bundleIdentifier: request.bundleIdentifier, kind: .file,
                mailbox: mailbox, originalName: originalName, extensionChain: name.extensionChain,
                containerPath: request.containerRoot, finalPath: folder.path(of: finalName).string,
                finalDevice: copy.device, finalInode: copy.inode, temporaryPath: temporaryPath,
                contentType: request.contentType, size: size, sha256: sha256,
                sourceApplication: request.sourceApplication,
                annotation: Self.annotation(mailbox: mailbox, originalFilename: originalName, size: size, extra: request.annotation),
                state: .staged, sourcePath: FilePath(request.sourcePath), sourceDevice: sourceStatus.device, sourceInode: sourceStatus.inode,
                sourceSize: Self.packageSourceMarker, sourceMtimeNs: Self.packageSourceMarker)
            try ledger.stage([record])
            staged = true
            if lastStep == .stage { return crashed }
            while try !writer.place(temporaryName, as: finalName, in: folder) {
                // Someone took the name meanwhile: the next free one, recorded before the rename.
                (finalName, counter) = try writer.firstFreeName(name, in: folder, from: counter + 1)
                record.finalPath = folder.path(of: finalName).string
                try ledger.updateFinalPath(deliveryID: request.deliveryID, finalPath: record.finalPath!)
            }
            placedName = finalName
            try DeliveryError.performing("sync", folder.path.string) { try folder.descriptor.sync() }
            if lastStep == .place { return crashed }
            let now = Date()
            guard let sequence = try ledger.commit([request.deliveryID], at: now)[request.deliveryID] else {
                throw DeliveryError(code: .ledger, message: "The staged ledger row of \(path) was gone at commit. \(DeliveryError.advice(for: .ledger))")
            }
            record.sequence = sequence
            record.state = .committed
            record.committedAt = now
            record.temporaryPath = nil
            if lastStep == .commit { return .committed(record) }
            removePackageSource(request, status: sourceStatus, deliveryID: request.deliveryID)
            logger.debug("delivered a package", metadata: ["source": "\(path)", "final": "\(record.finalPath ?? "")", "bytes": "\(size)"])
            return .committed(record)
        } catch {
            // Nothing is committed: take the copy back (under whichever name it has) and the row.
            if let placedName {
                try? PackageTree.remove(Array(placedName.utf8), in: folder.descriptor.rawValue, describing: folder.path(of: placedName).string)
            }
            try? PackageTree.remove(Array(temporaryName.utf8), in: folder.descriptor.rawValue, describing: temporaryPath)
            if staged { try? ledger.discard([request.deliveryID]) }
            let failure = DeliveryError.wrapping("deliver a package", error)
            logger.warning("package delivery failed; the source stays in its inbox", metadata: [
                "source": "\(path)", "handler": "\(request.bundleIdentifier)", "code": "\(failure.code.rawValue)", "error": "\(failure.message)",
            ])
            return .failed(failure)
        }
    }

    /// Removes a delivered package's source tree if its inbox name still holds that very folder,
    /// syncs the inbox, and notes it in the ledger. Failures are logged: recovery tries again.
    private func removePackageSource(_ request: PackageRequest, status: FileStatus, deliveryID: UUID) {
        let path = request.sourcePath
        let inbox = request.sourceFolder.descriptor
        do {
            // Not while the ledger that records the delivery is gone or replaced.
            try ledger.confirmInPlace()
            // A name that cannot be inspected is not taken for a removed one: the error is logged
            // below and the source stays noted as not removed, for recovery to try again.
            let found = try PackageTree.component(request.sourceName).flatMap { name in
                try DeliveryError.performing("inspect", path) { try inbox.status(of: name) }
            }
            if let found, found.isDirectory, found.isSameFile(as: status) {
                try PackageTree.remove(request.sourceName, in: inbox.rawValue, describing: path)
                try DeliveryError.performing("sync", FilePath(request.sourcePath).removingLastComponent().string) { try inbox.sync() }
            }
            try ledger.markSourcesRemoved([deliveryID])
        } catch {
            logger.warning("could not remove a delivered package from its inbox; it will be removed at the next start", metadata: [
                "source": "\(path)", "error": "\(error)",
            ])
        }
    }
}
