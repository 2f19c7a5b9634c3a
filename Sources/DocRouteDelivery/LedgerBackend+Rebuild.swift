import DocRouteLedger
import DocRoutePlatform
import Foundation
import NIOPosix
import SystemPackage

extension LedgerBackend {
    /// Measures, after start, the documents a `docrouted --recover-ledger` left for lack of time
    /// (``LedgerRebuild/Pending``), one at a time on a thread of their own, and gives each its row:
    /// its old one (same path, size and digest, with its state) or a new one owed to its handler,
    /// whose bundle `committed` is told so it is sent at once. Returns when the list is done (and
    /// removed) or the task is cancelled (the list stays: the next start goes on with it).
    ///
    /// What is split off here and what is not: ``recover()`` runs before the daemon accepts any
    /// work, because each of its steps decides what new work may do. Staged rows are committed or
    /// dropped (a source whose staged copy is committed later would be delivered twice meanwhile);
    /// leftover temporaries are removed (a sweep beside new batches would remove their copies);
    /// delivered sources left in inboxes are removed (before intake would see them); poison marks
    /// are read (before intake touches those inputs again). The documents left by a rebuild are
    /// not needed before: they lie in their sandboxes under their final names already, which no
    /// new delivery takes (a name is free only when nothing is there); no source in an inbox
    /// refers to them; a row given meanwhile to the same path (a delivery after the handler
    /// removed the document) is found and the document passed over; and a handler is told of
    /// them later rather than never.
    package func continueRebuild(committed: @escaping @Sendable (String) async -> Void) async {
        let state = FilePath(configuration.stateDirectory)
        guard let pending = LedgerRebuild.Pending.read(in: state, logger: logger) else { return }
        logger.notice("measuring the documents the ledger rebuild left, in the background", metadata: [
            "documents": "\(pending.documents.count)", "perFileSeconds": "\(pending.perFileSeconds)",
        ])
        let worker = NIOThreadPool(numberOfThreads: 1)
        worker.start()
        defer { worker.shutdownGracefully { _ in } }
        let handlers = configuration.handlersDirectory
        guard let continuation = try? await worker.runIfActive({ [logger] in
            LedgerRebuild.continuation(pending, handlersDirectory: handlers, logger: logger)
        }) else { return }
        var kept = 0
        var owed = 0
        for document in pending.documents {
            if Task.isCancelled { return }
            do {
                let settled = try await worker.runIfActive { [ledger, logger] in
                    try LedgerRebuild.settle(document, continuation, ledger: ledger, logger: logger)
                }
                switch settled {
                case .kept: kept += 1
                case .owed(let bundle):
                    owed += 1
                    await committed(bundle)
                case .passed: break
                }
            } catch {
                // Not in the new ledger, as an unreadable entry of the rebuild is not.
                logger.warning("a document the ledger rebuild left cannot be read; it is left out", metadata: [
                    "path": "\(document.path)", "error": "\(error)",
                ])
            }
        }
        do {
            var done = pending
            done.documents = []
            try done.save(in: state)
        } catch {
            logger.warning("the list of documents the ledger rebuild left could not be removed; the next start passes over them", metadata: ["error": "\(error)"])
        }
        logger.notice("the documents the ledger rebuild left are in the ledger", metadata: ["kept": "\(kept)", "owed": "\(owed)"])
    }
}
