import DocRouteConfiguration
import Logging

extension RoutingDaemon {
    /// Reads the configuration file again (SIGHUP) and takes what may change while running: the
    /// inboxes (added ones watched and scanned, dropped ones no longer watched) and the keys of
    /// ``DaemonConfiguration/reloaded(from:)``. A key that needs a restart is named in the log,
    /// in `status` (`needsRestart`) and by `docrouted --check`. A file that no longer reads keeps
    /// the configuration the daemon runs with, and the log says why.
    func rereadConfiguration() async {
        let current = configuration
        guard current.file != DaemonConfiguration.embeddedDefaultName else { return }
        let file: DaemonConfiguration
        do {
            file = try await threadPool.runIfActive { [path = current.file] in try DaemonConfiguration.load(path: path) }
        } catch {
            logger.error("configuration not reloaded: \(error); docrouted goes on with the configuration it runs with", metadata: [
                "message-id": "configuration-not-reloaded", "path": "\(current.file)",
            ])
            return
        }
        let reload = current.reloaded(from: file)
        currentConfiguration.withLock { $0 = reload.configuration }
        keysNeedingRestart.withLock { $0 = reload.needsRestart }
        await intake.reconfigure(reload)
        if !reload.applied.isEmpty {
            logger.info("configuration reloaded: \(reload.applied.joined(separator: ", ")) taken", metadata: ["path": "\(current.file)"])
        }
        if !reload.needsRestart.isEmpty {
            logger.warning("configuration changed where a reload cannot take it: \(reload.needsRestart.joined(separator: ", ")) needs a restart (systemctl restart docroute)", metadata: [
                "message-id": "needs-restart", "path": "\(current.file)", "keys": "\(reload.needsRestart.joined(separator: ","))",
            ])
        }
    }
}
