import Logging

extension IntakePipeline {
    /// A file nobody claims while some handler manifests could not be read (an I/O error, a
    /// folder docrouted may not list): one of those handlers may well claim it, so it waits in its
    /// inbox and is tried again with the usual backoff, instead of going to quarantine. The
    /// daemon reads the manifests again until it can (``RoutingDaemon``); the file is then
    /// delivered, or quarantined once every manifest was read and still nobody claims it.
    /// Returns whether the file was set aside so.
    func waitsForUnreadableManifests(_ arrival: ArrivalQueue.Arrival, snapshot: RoutingSnapshot, contentType: String) -> Bool {
        let unreadable = snapshot.registry.unreadableManifests
        guard !unreadable.isEmpty else { return false }
        // Said once a file; its retries say so at debug level only.
        let level: Logger.Level = (attempts[arrival] ?? 0) == 0 ? .warning : .debug
        logger.log(level: level, "no handler claims \(contentType), and \(unreadable.count) handler manifest(s) could not be read: the file waits in its inbox until they can", metadata: [
            "message-id": "waits-for-manifests", "path": "\(arrival.folder.path)/\(InboxNames.display(arrival.name))",
            "manifests": "\(unreadable.joined(separator: ", "))",
        ])
        scheduleRetry(arrival)
        return true
    }
}
