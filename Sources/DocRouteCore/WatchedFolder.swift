/// A folder under inotify watch: an inbox root or one of its mailbox subfolders.
public struct WatchedFolder: Sendable, Hashable {
    /// Index into the configuration's inboxes.
    public var inbox: Int
    /// nil for the inbox root; the mailbox name for `<inbox>/<mailbox>/`.
    public var mailbox: String?
    public var path: String
}
