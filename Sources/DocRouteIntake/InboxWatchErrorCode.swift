import DocRouteErrors
import Foundation
import SystemPackage

/// Stable codes of ``InboxWatcher/WatchError``.
package struct InboxWatchErrorCode: ErrorCodeProtocol {
    /// The code's text, e.g. `watch-limit`.
    package let rawValue: String
    private init(_ rawValue: String) { self.rawValue = rawValue }

    /// inotify could not be set up, or a folder could not be watched.
    package static let watchFailed = Self("watch-failed")
    /// inotify_add_watch's ENOSPC: the user's watches reached fs.inotify.max_user_watches.
    package static let watchLimit = Self("watch-limit")

    /// The message alone: it names the folder and what to do.
    package static func describe(_ error: InboxWatcher.WatchError) -> String { error.message }
}

extension DocRouteError where Code == InboxWatchErrorCode {
    /// Watching `path` failed with `errno`; at the watch limit the message names the limit in force
    /// and how to raise it.
    static func watching(_ path: String, errno cause: Errno, file: String = #fileID, line: Int = #line) -> Self {
        guard cause == .noSpace else {
            return Self(code: .watchFailed, message: "cannot watch \(path): \(cause)", cause: cause, file: file, line: line)
        }
        func setting(_ path: String) -> Int? {
            (try? String(contentsOfFile: path, encoding: .utf8)).flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        let global = setting("/proc/sys/fs/inotify/max_user_watches")
        // In a user namespace (containers) its own user.max_inotify_watches may be the lower limit.
        let namespace = setting("/proc/sys/user/max_inotify_watches")
        var limit = "fs.inotify.max_user_watches (\(global.map(String.init) ?? "?"))"
        if let namespace, namespace < global ?? Int.max {
            limit += " or this user namespace's user.max_inotify_watches (\(namespace))"
        }
        return Self(
            code: .watchLimit,
            message: "cannot watch \(path): the inotify watch limit \(limit) is reached; "
                + "raise it with `sysctl fs.inotify.max_user_watches=524288` and keep it in /etc/sysctl.d/",
            cause: cause, file: file, line: line)
    }

    /// inotify_add_watch's ENOSPC: the user's watches reached fs.inotify.max_user_watches.
    package var isWatchLimit: Bool { code == .watchLimit }
}
