import DocRouteConfiguration
import Logging

extension IntakePipeline {
    /// Takes what a reload read from the configuration file: inboxes the file adds are watched
    /// and scanned now; inboxes it drops are no longer watched (their files stay where they are,
    /// and arrivals of theirs still queued are left alone); an inbox's new mailbox or source
    /// application holds for files taken from now on; the limits intake reads (`max_file_size`,
    /// `max_file_allocation`, `max_queued_files`, `max_mailboxes`) hold for the next file.
    package func reconfigure(_ reload: DaemonConfiguration.Reload) {
        configuration = reload.configuration
        for index in reload.retiredInboxes {
            let inbox = configuration.inboxes[index]
            watcher.unwatch(inbox: index)
            folders.forget(inbox.path)
            watchedFolders[index] = nil
            foldersNotServed[index] = nil
            logger.notice("inbox no longer served (removed from the configuration); its files stay where they are", metadata: [
                "inbox": "\(inbox.path)", "kind": "\(inbox.kind.rawValue)",
            ])
        }
        for index in reload.changedInboxes {
            let inbox = configuration.inboxes[index]
            logger.notice("inbox settings changed: files from now on arrive in mailbox \(inbox.defaultMailbox) from \(inbox.sourceApplication)", metadata: [
                "inbox": "\(inbox.path)",
            ])
        }
        for index in reload.addedInboxes {
            let inbox = configuration.inboxes[index]
            logger.notice("inbox added by the configuration: watching and scanning it", metadata: [
                "inbox": "\(inbox.path)", "kind": "\(inbox.kind.rawValue)",
            ])
            watchInbox(index)
        }
        if !reload.addedInboxes.isEmpty { activity.rescanned(.configuration) }
    }
}
