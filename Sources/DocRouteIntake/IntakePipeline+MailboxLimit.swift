import Logging

extension IntakePipeline {
    /// Whether `folder` may be watched under `max_mailboxes`: a folder watched already may, a new
    /// one only while its inbox watches fewer than the limit. A folder past the limit is not
    /// served (its files stay where they are) and is counted in `status`; the log says so once per
    /// inbox until the inbox is back under the limit, and warns once when it comes near.
    func admitWatch(_ folder: WatchedFolder) -> Bool {
        let inbox = folder.inbox
        let limit = configuration.maxMailboxes
        var watched = watchedFolders[inbox, default: []]
        if watched.contains(folder.path) { return true }
        guard watched.count < limit else {
            let firstRefusal = foldersNotServed[inbox, default: []].isEmpty
            let inserted = foldersNotServed[inbox, default: []].insert(folder.path).inserted
            if inserted { activity.foldersWatched(inbox: inbox, count: watched.count, notServed: foldersNotServed[inbox]?.count ?? 0) }
            if firstRefusal {
                logger.warning("inbox has max_mailboxes (\(limit)) folders watched already: folders made after that are not served and their files stay where they are; remove folders nobody uses, or raise max_mailboxes", metadata: [
                    "message-id": "mailbox-limit", "inbox": "\(configuration.inboxes[inbox].path)", "path": "\(folder.path)",
                ])
            }
            return false
        }
        watched.insert(folder.path)
        watchedFolders[inbox] = watched
        activity.foldersWatched(inbox: inbox, count: watched.count, notServed: foldersNotServed[inbox]?.count ?? 0)
        if watched.count == limit * 9 / 10 {
            logger.warning("inbox is near max_mailboxes: \(watched.count) of \(limit) folders watched", metadata: [
                "message-id": "mailbox-limit-near", "inbox": "\(configuration.inboxes[inbox].path)",
            ])
        }
        return true
    }

    /// A watched folder went away: its place under `max_mailboxes` is free again. Folders that
    /// were not served are looked at again by the next listing of the inbox (one, a while later,
    /// however many folders go).
    func folderUnwatched(_ folder: WatchedFolder) {
        guard watchedFolders[folder.inbox]?.remove(folder.path) != nil else { return }
        let inbox = folder.inbox
        activity.foldersWatched(inbox: inbox, count: watchedFolders[inbox]?.count ?? 0, notServed: foldersNotServed[inbox]?.count ?? 0)
        guard !(foldersNotServed[inbox]?.isEmpty ?? true), !relistScheduled.contains(inbox) else { return }
        relistScheduled.insert(inbox)
        Task { [weak self] in
            try? await Task.sleep(for: Self.unwatchedRescanInterval)
            await self?.relistAfterMailboxLimit(inbox)
        }
    }

    func relistAfterMailboxLimit(_ inbox: Int) {
        relistScheduled.remove(inbox)
        guard !stopped else { return }
        foldersNotServed[inbox] = nil
        scanInbox(inbox)
    }
}
