import Foundation
import Logging

extension IntakePipeline {
    /// How often a mailbox that could not be watched is scanned, and its watch tried again.
    static let unwatchedRescanInterval: Duration = .seconds(30)

    /// A mailbox folder could not be watched. When the cause is the inotify watch limit, the
    /// mailbox is still served: its files are taken now and it is scanned again every 30 s (each
    /// time trying to watch it again) until a watch succeeds. Returns whether to scan it now.
    func mailboxNotWatched(_ folder: WatchedFolder, name: [UInt8], error: any Error, attempt: Int) -> Bool {
        let limitReached = (error as? InboxWatcher.WatchError)?.isWatchLimit == true
        guard limitReached else {
            logger.error("mailbox cannot be watched: \(error)", metadata: ["path": "\(folder.path)"])
            return false
        }
        // One error line per mailbox; the retries that keep failing say so only at debug level.
        let level: Logger.Level = attempt == 0 ? .error : .debug
        logger.log(level: level, "mailbox cannot be watched: \(error); until then it is scanned every 30 s instead", metadata: [
            "message-id": "watch-limit", "path": "\(folder.path)",
        ])
        guard !stopped, folder.mailbox != nil else { return true }
        let inbox = folder.inbox
        Task { [weak self] in
            try? await Task.sleep(for: Self.unwatchedRescanInterval)
            await self?.rescanUnwatched(inbox: inbox, name: name, attempt: attempt + 1)
        }
        return true
    }

    func rescanUnwatched(inbox: Int, name: [UInt8], attempt: Int) {
        guard !stopped else { return }
        addMailbox(inbox: inbox, name: name, attempt: attempt)
    }
}
