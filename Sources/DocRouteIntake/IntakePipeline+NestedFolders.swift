import Foundation

extension IntakePipeline {
    /// How deep folders inside a mailbox folder are followed (`drop/<mailbox>/a/b/…`).
    package static let nestedFolderDepth = 8

    /// A folder inside a mailbox folder (`cp -r myfolder drop/` brings `myfolder/sub/`): mailboxes
    /// are one level deep, so its files are delivered to the mailbox that holds it, and it is
    /// watched and listed like the mailbox itself. Nothing in it waits unseen. The emptied folders
    /// stay in the inbox (a sender may still be writing into them).
    func nestedFolderAppeared(in parent: WatchedFolder, name: [UInt8]) {
        guard let mailbox = parent.mailbox, !InboxNames.isInProgress(name) else { return }
        let inboxPath = configuration.inboxes[parent.inbox].path
        let depth = parent.path.dropFirst(inboxPath.count).split(separator: "/").count
        let path = parent.path + "/" + InboxNames.display(name)
        guard depth < Self.nestedFolderDepth else {
            logger.warning("folder nested too deep in a mailbox: its files are not delivered; move them up to the mailbox folder",
                           metadata: ["path": "\(path)", "mailbox": "\(mailbox)", "depth-limit": "\(Self.nestedFolderDepth)"])
            return
        }
        let folder = WatchedFolder(inbox: parent.inbox, mailbox: mailbox, path: path)
        guard admitWatch(folder) else { return }
        logger.notice("folder inside a mailbox folder: its files go to mailbox \(mailbox)", metadata: ["path": "\(path)"])
        do {
            try watcher.watch(folder)
        } catch {
            // What is there now is still delivered; later arrivals wait for the next scan.
            logger.error("folder inside a mailbox cannot be watched: \(error); files added later are found at the next scan",
                         metadata: ["path": "\(path)"])
        }
        queueEntries(of: folder)
    }
}
