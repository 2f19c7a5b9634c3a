import DocRouteFleet
import DocRouteIntake
import DocRouteLedger
import DocRoutePlatform
import Foundation
import Logging
import SystemPackage

extension FleetIntakeBackend {
    /// A file a crash left under a delivery's hidden name in an inbox folder.
    struct RemovalLeftover: Sendable {
        var folder: FilePath
        var name: FilePath.Component
        var deliveryID: UUID
    }

    /// What ``settleRemovalLeftovers(inboxes:)`` did.
    package struct LeftoverSettlement: Sendable, Hashable {
        /// Committed sources removed.
        package var removed = 0
        /// Files put back under a name intake delivers.
        package var returned = 0
        /// Files left as they were: the fleet could not be asked, or the file could not be moved.
        package var kept = 0
    }

    /// Settles, at start, what a crash left in this host's directory inboxes between a fleet
    /// source's rename to its delivery's hidden name (``SourceReclaimer/removingName(_:)``, an inbox
    /// with no reclaim folder on its file system) and its unlink. The local ledger has no row of a
    /// document committed to the fleet, so local recovery leaves these; intake passes over hidden
    /// names, so they would wait unseen. Each is settled by what PostgreSQL committed under its
    /// id: the very file committed (the same device, inode, size and modification time in the
    /// source's identity) is removed, with its `sourceReclaimed` event; any other file (one a sender
    /// renamed over the source's name after the commit) goes back under the committed source's
    /// name, or beside it when the name is taken, and is delivered in its turn; a file under an
    /// id the fleet does not have (never committed by this host, or pruned) is put back as
    /// `docroute-recovered-<id>`, never freed unseen. PostgreSQL unreachable: they stay, and the
    /// next start settles them.
    package func settleRemovalLeftovers(inboxes: [String]) async -> LeftoverSettlement {
        var settlement = LeftoverSettlement()
        let logger = logger
        let found: [RemovalLeftover]
        do {
            found = try await local.sourcePool.runIfActive { Self.findRemovalLeftovers(in: inboxes, logger: logger) }
        } catch {
            logger.warning("fleet: the inboxes could not be looked through for sources a crash left half removed: \(error)")
            return settlement
        }
        guard !found.isEmpty else { return settlement }
        let identities: [UUID: String]
        do {
            identities = try await queue.committedSourceIdentities(deliveryIDs: found.map(\.deliveryID))
        } catch {
            logger.warning("fleet: sources a crash left half removed stay hidden in their inboxes until the next start: PostgreSQL could not say whether they were committed: \(error.message) (\(error.code.rawValue))",
                           metadata: ["count": "\(found.count)"])
            settlement.kept = found.count
            return settlement
        }
        let host = hostName
        let outcome = try? await local.sourcePool.runIfActive {
            Self.settle(found, identities: identities, host: host, logger: logger)
        }
        guard let (done, removed) = outcome else {
            settlement.kept = found.count
            return settlement
        }
        recordFreed(removed, at: Date())
        if done.removed > 0 {
            logger.info("fleet: removed sources committed to the fleet that a crash left half removed in their inboxes", metadata: ["count": "\(done.removed)"])
        }
        return done
    }

    /// Every `.docroute-removing-<id>` in the directory inboxes `inboxes`, their mailbox folders
    /// and the folders nested in those (as deep as intake follows them).
    static func findRemovalLeftovers(in inboxes: [String], logger: Logger) -> [RemovalLeftover] {
        var found: [RemovalLeftover] = []
        func walk(_ folder: FileDescriptor, path: FilePath, depth: Int) {
            let entries: [DirectoryEntry]
            do {
                entries = try folder.directoryEntries()
            } catch {
                logger.warning("fleet: a folder could not be listed for sources a crash left half removed", metadata: ["folder": "\(path.string)", "error": "\(error)"])
                return
            }
            for entry in entries {
                if entry.isDirectory {
                    guard depth <= IntakePipeline.nestedFolderDepth, !InboxNames.isInProgress(entry.nameBytes),
                          let child = try? folder.openDirectory(entry.name) else { continue }
                    defer { child.closeIgnoringErrors() }
                    walk(child, path: path.appending(entry.name), depth: depth + 1)
                } else if let id = deliveryID(removingName: entry.name) {
                    found.append(RemovalLeftover(folder: path, name: entry.name, deliveryID: id))
                }
            }
        }
        for inbox in inboxes {
            guard let folder = try? FileDescriptor.openDirectory(atPath: FilePath(inbox)) else { continue }
            defer { folder.closeIgnoringErrors() }
            walk(folder, path: FilePath(inbox), depth: 0)
        }
        return found
    }

    /// The delivery id of a name ``SourceReclaimer/removingName(_:)`` made; nil for any other.
    static func deliveryID(removingName name: FilePath.Component) -> UUID? {
        let prefix = ".docroute-removing-"
        let text = name.string
        guard text.hasPrefix(prefix) else { return nil }
        let id = UUID(canonicalText: text.dropFirst(prefix.count))
        return id.flatMap { SourceReclaimer.removingName($0) == name ? $0 : nil }
    }

    /// Settles each leftover by its committed identity; returns what was done and the delivery
    /// ids of the sources removed.
    static func settle(_ leftovers: [RemovalLeftover], identities: [UUID: String], host: String,
                       logger: Logger) -> (LeftoverSettlement, [UUID]) {
        var settlement = LeftoverSettlement()
        var removed: [UUID] = []
        for leftover in leftovers {
            let leftoverPath = leftover.folder.appending(leftover.name).string
            do {
                let folder = try DeliveryError.performing("open folder", leftover.folder.string) { try FileDescriptor.openDirectory(atPath: leftover.folder) }
                defer { folder.closeIgnoringErrors() }
                guard let found = try DeliveryError.performing("inspect", leftoverPath, { try folder.status(of: leftover.name) }) else { continue }
                let identity = identities[leftover.deliveryID]
                let own = FleetSourceIdentity.prefix(host: host, device: found.device, inode: found.inode, size: found.size,
                                                      modificationNanoseconds: found.modificationTimeNanoseconds)
                if let identity, identity.hasPrefix(own) {
                    if try DeliveryError.performing("remove", leftoverPath, { try folder.unlink(leftover.name) }) {
                        settlement.removed += 1
                        removed.append(leftover.deliveryID)
                        try? folder.sync()
                    }
                    continue
                }
                let committedName = identity.flatMap(FleetSourceIdentity.path(of:)).flatMap { FilePath($0).lastComponent }
                let name = committedName ?? FilePath.Component("docroute-recovered-\(leftover.deliveryID.protocolText)")!
                try SourceReclaimer.putBack(leftover.name, from: folder, as: name, in: folder, describing: leftoverPath, logger: logger)
                try? folder.sync()
                settlement.returned += 1
                logger.warning(identity == nil
                    ? "fleet: a file hidden as a source being removed has no delivery committed under its id; it is back in its inbox under a name of its own and will be delivered"
                    : "fleet: a file hidden as a committed source being removed was another one (its sender replaced the source as the daemon stopped); it is back in its inbox and will be delivered",
                    metadata: ["path": "\(leftoverPath)", "name": "\(name.string)", "delivery-id": "\(leftover.deliveryID.protocolText)"])
            } catch {
                settlement.kept += 1
                logger.error("fleet: a file a crash left hidden in an inbox could not be settled; it is kept. Rename it to have it delivered", metadata: [
                    "path": "\(leftoverPath)", "error": "\(error)",
                ])
            }
        }
        return (settlement, removed)
    }
}
