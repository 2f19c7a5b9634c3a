import DocRouteFleet
import Foundation

extension FleetDelivery {
    /// Until cancelled: a pruning run of the fleet's database (``FleetPruning``) a minute after the
    /// start and then every `interval`, on a connection of its own; one host at a time prunes, by
    /// an advisory lock. What a run removed is one line at info; a run that removed nothing, or
    /// found another host pruning, or could not reach PostgreSQL, a line at debug (the next run
    /// tries again).
    package func runPruning(historyDays: Int, interval: Duration = .seconds(900)) async {
        let database = queue.database
        let retainDays = database.configuration.retainDays
        var wait: Duration = .seconds(60)
        while !Task.isCancelled {
            guard (try? await Task.sleep(for: wait)) != nil else { return }
            wait = interval
            let logger = logger
            do {
                let report = try await database.withConnection(logger: logger) { connection in
                    try await FleetPruning.prune(on: connection, retainDays: retainDays, historyDays: Double(historyDays), logger: logger)
                }
                guard let report else {
                    logger.debug("fleet: another host is pruning the fleet's database")
                    continue
                }
                if report.isEmpty {
                    logger.debug("fleet: nothing to prune in the fleet's database")
                } else {
                    logger.info("""
                        fleet: pruned the bytes of \(report.documentsFreed) ended document(s) (\(report.bytesFreed) bytes) older than \
                        retain_days (\(retainDays)), and the history of \(report.documentsForgotten) document(s) \
                        (\(report.eventsForgotten) event(s)) older than \(max(historyDays, retainDays)) days
                        """, metadata: [
                            "documents-freed": "\(report.documentsFreed)", "bytes-freed": "\(report.bytesFreed)",
                            "documents-forgotten": "\(report.documentsForgotten)", "events-forgotten": "\(report.eventsForgotten)",
                        ])
                }
            } catch {
                logger.debug("fleet: the fleet's database could not be pruned now; tried again at the next run: \(error.message)")
            }
        }
    }
}
