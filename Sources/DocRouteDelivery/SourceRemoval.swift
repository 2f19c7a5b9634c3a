import DocRoutePlatform

/// Step 6 of a committed delivery batch, taking its sources out of their inboxes, held back by
/// ``DeliveryBatch/complete(_:committed:)`` so that it runs on a thread of its own while the
/// next batch commits.
///
/// Run each batch's removal once, in the order the batches committed: a source in two batches
/// (queued again while in flight) must leave its inbox as the first batch's delivery, which is
/// what the second one finds in the ledger. Nothing here changes an outcome: the copies are
/// committed, and a crash before the removal leaves sources that recovery takes out.
package struct SourceRemoval: Sendable {
    let batch: DeliveryBatch
    var items: [DeliveryBatch.Item]
    var timings: BatchStepTimings
    let started: ContinuousClock.Instant

    /// Takes the batch's committed sources out of their inboxes (renamed aside for the
    /// ``SourceReclaimer``, or removed) and logs the batch's step timings.
    package func run() {
        guard !items.isEmpty else { return }
        var items = items
        var timings = timings
        timings.mark("queuedForRemoval")
        // A ledger removed or replaced meanwhile took the commit with it: the sources stay (the
        // daemon stops; a copy delivered twice is better than a file lost).
        do {
            try batch.ledger.confirmInPlace()
            batch.removeSources(&items)
        } catch {
            batch.logger.critical("sources left in their inboxes: \(error)")
        }
        timings.mark("remove")
        // The batch's arrays, its ledger rows' bindings and the sources' names were freed in
        // the arenas of the threads that made them, between blocks still in use, and glibc keeps
        // such pages resident; each batch leaves a few more behind, so a long burst grows the
        // daemon's memory by what it freed. Giving the free pages back once per batch keeps it at
        // what is live.
        HeapMemory.releaseFreeMemory()
        timings.mark("trim")
        let failed = items.count { !$0.isAlive }
        batch.logger.debug("delivered a batch", metadata: [
            "files": "\(items.count)", "failed": "\(failed)",
            "duration": "\(ContinuousClock.now - started)", "steps": "\(timings)",
        ])
    }
}
