import DocRouteHandlers
import DocRouteProtocol
import Foundation
import DocRoutePlatform
import Logging
import SystemPackage

extension IntakePipeline {
    /// Whether a folder in an inbox is a package document rather than a mailbox: its name gives a
    /// type that conforms to `com.apple.package` (system-declared, e.g. `com.apple.rtfd`) or that a
    /// handler declares with `LSTypeIsPackage`. Any other folder is a mailbox.
    func isPackageFolder(_ name: [UInt8]) -> Bool {
        guard let snapshot = routing?() else { return false }
        return PackageFolders.isPackage(named: InboxNames.display(name), engine: snapshot.engine, registry: snapshot.registry)
    }

    /// A folder appeared in a drop folder: a mailbox at the top of an inbox, or a package document.
    ///
    /// When is a package complete? A folder has no close-after-write, so a package is taken when it
    /// arrives by rename (`IN_MOVED_TO`: built aside, then moved in whole) or when a scan (at start,
    /// after a queue overflow) finds it. A package created in place (`IN_CREATE`) may still be
    /// filling, so it is taken on a later scan only, never on its creation.
    func folderAppeared(in folder: WatchedFolder, name: [UInt8], movedIn: Bool) {
        guard !InboxNames.isInProgress(name) else { return }
        if isPackageFolder(name) {
            if movedIn { return enqueue(.init(folder: folder, name: name)) }
            logger.info("package folder created in place: it is delivered when it is moved in or at the next scan", metadata: [
                "message-id": "package-waiting", "path": "\(folder.path)/\(InboxNames.display(name))",
            ])
        } else if folder.mailbox == nil {
            addMailbox(inbox: folder.inbox, name: name)
        } else {
            nestedFolderAppeared(in: folder, name: name)
        }
    }

    /// Vets a package folder (one that stopped the daemon before, or is deeper or
    /// larger than `max_package_depth`/`max_package_entries`, is quarantined whole with the reason),
    /// then delivers it; its in-hand mark in the ledger lasts from before the first look at it
    /// until it is delivered, quarantined or failed.
    func deliverPackage(_ arrival: ArrivalQueue.Arrival, in folder: DirectoryHandle, snapshot: RoutingSnapshot) async {
        let folderFD = folder.descriptor.rawValue
        let path = arrival.folder.path + "/" + InboxNames.display(arrival.name)
        if let reason = await backend.vetPackage(name: arrival.name, in: folderFD, path: path) {
            let mailbox = arrival.folder.mailbox ?? configuration.inboxes[arrival.folder.inbox].defaultMailbox
            await quarantine(arrival, folder: folderFD, mailbox: mailbox, reason: reason)
        } else {
            await deliverVettedPackage(arrival, in: folder, snapshot: snapshot)
        }
        await backend.doneWithPackage(path: path)
    }

    /// Routes a package folder like a file (its type from its name, its handler by selection) and
    /// delivers it whole, or quarantines it whole when nobody claims it.
    func deliverVettedPackage(_ arrival: ArrivalQueue.Arrival, in folder: DirectoryHandle, snapshot: RoutingSnapshot) async {
        let folderFD = folder.descriptor.rawValue
        let inbox = configuration.inboxes[arrival.folder.inbox]
        let mailbox = arrival.folder.mailbox ?? inbox.defaultMailbox
        let display = InboxNames.display(arrival.name)
        let path = arrival.folder.path + "/" + display
        let classification = snapshot.engine.classify(filename: display)
        guard case .success(let handler) = snapshot.handler(for: classification) else {
            if waitsForUnreadableManifests(arrival, snapshot: snapshot, contentType: classification.contentType) { return }
            let parents = classification.conformsTo.prefix(3).joined(separator: ", ")
            return await quarantine(arrival, folder: folderFD, mailbox: mailbox,
                                    reason: Self.noHandlerReason(classification.contentType, parents: parents, package: true))
        }
        let request = PackageDelivery(
            sourceFolder: folder, sourceName: arrival.name, sourcePath: path,
            containerRoot: snapshot.containerRoot(of: handler), mailbox: mailbox, owner: snapshot.copyOwner(of: handler),
            originalName: display, extensionChain: classification.extensionChain,
            contentType: classification.contentType, bundleIdentifier: handler.bundleIdentifier,
            sourceApplication: inbox.sourceApplication)
        let outcome = await backend.deliverPackage(request)
        activity.packageDelivered(handler.bundleIdentifier, outcome, arrival: arrival)
        switch outcome {
        case .committed(let deliveryID, let finalPath, _, _):
            deliveredCount += 1
            attempts[arrival] = nil
            logger.info("delivered", metadata: [
                "message-id": "delivered", "delivery-id": "\(deliveryID.lowercased())", "bundle-id": "\(handler.bundleIdentifier)",
                "mailbox": "\(mailbox)", "path": "\(finalPath)", "content-type": "\(classification.contentType)", "package": "true",
                "original-name": "\(display)",
            ])
            await onCommitted?(handler.bundleIdentifier)
        case .alreadyDelivered(let deliveryID):
            attempts[arrival] = nil
            logger.info("package delivered before a crash removed now", metadata: ["delivery-id": "\(deliveryID.lowercased())", "original-name": "\(display)", "path": "\(path)"])
        case .failed(let error):
            logger.error("package delivery failed\(error.isRetryable ? "; will try again" : ""): \(error)", metadata: [
                "bundle-id": "\(handler.bundleIdentifier)", "path": "\(path)", "code": "\(error.code)", "original-name": "\(display)",
            ])
            if error.isRetryable { scheduleRetry(arrival) }
        }
    }
}
