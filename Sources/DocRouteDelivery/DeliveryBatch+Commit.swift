import DocRoutePlatform
import Foundation
import SystemPackage

extension DeliveryBatch {
    // MARK: (e) commit

    /// One transaction: placed copies committed, failed staged rows removed. If it fails, the
    /// placed copies are taken back so that the state matches "source still in its inbox".
    func commit(_ items: inout [Item]) {
        let placed = items.indices.filter { items[$0].placed && items[$0].isAlive }
        let discarded = items.filter { $0.record != nil && !$0.isAlive }.map(\.request.deliveryID)
        let now = Date()
        let sequences: [UUID: Int64]
        do {
            sequences = try ledger.commit(placed.map { items[$0].request.deliveryID }, discarding: discarded, at: now)
        } catch {
            for index in placed {
                unplace(items[index])
                items[index].placed = false
                fail(&items[index], error)
            }
            // If this fails too, recovery finds rows whose copies are gone and drops them.
            try? ledger.discard(placed.map { items[$0].request.deliveryID })
            return
        }
        for index in placed {
            guard let sequence = sequences[items[index].request.deliveryID] else {
                // The row vanished between staging and commit: nothing may claim this copy.
                unplace(items[index])
                items[index].placed = false
                fail(&items[index], DeliveryError(code: .ledger, message: "The staged ledger row of \(items[index].request.sourceFilePath.string) was gone at commit. \(DeliveryError.advice(for: .ledger))"))
                continue
            }
            items[index].record?.sequence = sequence
            items[index].record?.state = .committed
            items[index].record?.committedAt = now
            items[index].record?.temporaryPath = nil
        }
    }

    // MARK: (f) remove sources

    /// Takes each committed source out of its inbox if its inbox name still holds the very file
    /// that was copied (same device, inode, size and modification time, checked after the move):
    /// renamed aside, to be
    /// noted and freed later by the ``SourceReclaimer`` (no flush on this path), or removed; for
    /// the removed ones, syncs each inbox folder once and
    /// notes the removals in the ledger. Failures here are logged, never reported as failed
    /// deliveries: the copy is committed, and recovery or the next batch's ``BatchLedger/deliveredRecords(forSources:isTakenOut:)``
    /// removes a source left behind.
    func removeSources(_ items: inout [Item]) {
        var settled: [Int] = []
        var removedIn: [CInt: [Int]] = [:]
        var folderOrder: [CInt] = []
        for index in items.indices where (items[index].isAlive && items[index].record?.state == .committed) || items[index].earlier != nil {
            let request = items[index].request
            if request.keepSource {
                settled.append(index)
                continue
            }
            do {
                // The name is moved first and checked after (SourceReclaimer.takeAside): gone already,
                // or another (or a rewritten) file by that name now, is not ours and stays.
                let id = items[index].earlier?.deliveryID ?? request.deliveryID
                let taken = try reclaimer?.takeAside(request.sourceComponent, in: request.sourceDirectory, expected: request.sourceStatus,
                                                     deliveryID: id, describing: request.sourceFilePath.string)
                    ?? SourceReclaimer.removeWithinInbox(request.sourceComponent, in: request.sourceDirectory, expected: request.sourceStatus,
                                                         deliveryID: id, describing: request.sourceFilePath.string, logger: logger)
                switch taken {
                case .deferred:
                    // Noted in the ledger by the reclaimer, after a syncfs, before it frees the inode.
                    continue
                case .gone, .notOurs:
                    // An earlier delivery's source may be gone because an earlier batch took it
                    // aside, not yet synced: noting it here could outlive a crash that undoes that
                    // rename (the source would come back, noted as removed, and be delivered
                    // again). The reclaimer notes it after its `syncfs`, or the next start checks.
                    if items[index].earlier == nil { settled.append(index) }
                    continue
                case .removed:
                    break
                }
                let folder = request.sourceDirectory.rawValue
                if removedIn[folder] == nil { folderOrder.append(folder) }
                removedIn[folder, default: []].append(index)
            } catch {
                logger.warning("could not remove a delivered source; it will be removed at the next start", metadata: [
                    "source": "\(request.sourceFilePath.string)", "error": "\(error)",
                    "delivery-id": "\((items[index].earlier?.deliveryID ?? request.deliveryID).protocolText)", "original-name": "\(request.sandboxName.original)",
                ])
            }
        }
        for folder in folderOrder {
            guard let indices = removedIn[folder] else { continue }
            do {
                try DeliveryError.performing("sync", items[indices[0]].request.sourceFilePath.removingLastComponent().string) { try FileDescriptor(rawValue: folder).sync() }
                settled += indices
            } catch {
                logger.warning("could not sync an inbox folder after removing delivered sources", metadata: [
                    "folder": "\(items[indices[0]].request.sourceFilePath.removingLastComponent().string)", "error": "\(error)",
                ])
            }
        }
        guard !settled.isEmpty else { return }
        let now = Date()
        do {
            try ledger.markSourcesRemoved(settled.map { items[$0].earlier?.deliveryID ?? items[$0].request.deliveryID }, at: now)
            for index in settled {
                items[index].record?.sourceRemovedAt = now
                items[index].earlier?.sourceRemovedAt = now
            }
        } catch {
            logger.warning("could not note removed sources in the ledger; they are checked again at the next start", metadata: ["error": "\(error)"])
        }
    }
}
