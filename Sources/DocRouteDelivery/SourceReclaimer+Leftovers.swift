import DocRouteLedger
import DocRoutePlatform
import Foundation
import Logging
import SystemPackage

extension SourceReclaimer {
    /// Settles what a previous run left in the folder (`folder`, at `path`) before anything new
    /// enters it; returns how many sources it freed.
    ///
    /// Each name is a delivery's id. A file the ledger records as that delivery's source (device,
    /// inode, size and modification time) is freed: recovery, which runs first, has noted its
    /// source settled, since it was not found in its inbox. Anything else (a sender renamed a new
    /// file, or a folder, over the source's name after the copy, and the daemon stopped between
    /// taking it aside and checking it) is put back under its name in its inbox, or beside it when
    /// the name is taken, and is delivered in its turn: never freed unseen. Where the ledger cannot
    /// tell (no row, or a row rebuilt from the sandboxes without its source), the file is freed as
    /// the folder's rule says: only a committed delivery's source enters it.
    func settleLeftovers(in folder: FileDescriptor, path: FilePath) throws -> Int {
        var freed = 0
        var inboxes: [FilePath: FileDescriptor] = [:]
        defer { for inbox in inboxes.values { inbox.closeIgnoringErrors() } }
        for leftover in try DeliveryError.performing("list folder", path.string, { try folder.directoryNames() }) {
            let leftoverPath = path.appending(leftover).string
            if let record = try UUID(canonicalText: leftover.string).flatMap(recordOf),
               let source = record.sourcePath, let name = source.lastComponent,
               let found = try DeliveryError.performing("inspect", leftoverPath, { try folder.status(of: leftover) }),
               Self.isNot(record, found) {
                let inboxPath = source.removingLastComponent()
                do {
                    let inbox = try inboxes[inboxPath]
                        ?? DeliveryError.performing("open folder", inboxPath.string) { try FileDescriptor.openDirectory(atPath: inboxPath) }
                    inboxes[inboxPath] = inbox
                    try Self.returnTakenByMistake(leftover, from: folder, as: name, in: inbox, of: record, logger: logger)
                } catch {
                    logger.error("a file taken aside as a delivered source was another one and cannot go back to its inbox; it is kept. Move it into an inbox to have it delivered", metadata: [
                        "kept": "\(leftoverPath)", "inbox": "\(inboxPath.string)", "error": "\(error)",
                    ])
                }
                continue
            }
            if try DeliveryError.performing("remove", leftoverPath, { try folder.unlink(leftover) }) { freed += 1 }
        }
        return freed
    }

    /// Puts back a file a crash left taken aside as `record`'s source that is another one (its
    /// sender renamed it over the source's name after the copy): under `name` in `inbox`, or
    /// beside it when the name is taken, where intake delivers it.
    static func returnTakenByMistake(_ aside: FilePath.Component, from folder: FileDescriptor, as name: FilePath.Component,
                                     in inbox: FileDescriptor, of record: LedgerRecord, logger: Logger) throws {
        let path = record.sourcePath?.string ?? name.string
        try putBack(aside, from: folder, as: name, in: inbox, describing: path, logger: logger)
        logger.warning("a file taken aside as a delivered source was another one (its sender replaced the source as the daemon stopped); it is back in its inbox and will be delivered", metadata: [
            "path": "\(path)", "delivery": "\(record.deliveryID.ledgerText)",
        ])
    }

    /// Whether the ledger says `found` is not the source `record` delivered; false when the row
    /// does not say what the source was (a package, or a row rebuilt from the sandboxes).
    static func isNot(_ record: LedgerRecord, _ found: FileStatus) -> Bool {
        guard let device = record.sourceDevice, let inode = record.sourceInode,
              let size = record.sourceSize, let modified = record.sourceMtimeNs,
              size != DeliveryBatch.packageSourceMarker
        else { return false }
        return !(found.device == device && found.inode == inode && found.size == size && found.modificationTimeNanoseconds == modified)
    }
}
