import DocRoutePlatform
import SystemPackage

/// The folders intake reads from: each inbox's root, held open while it is watched, and the
/// folders below it (mailboxes, a Maildir's `new/`), opened from the root when files are taken
/// from them and kept only among the few used last.
///
/// Nothing is held per mailbox: anyone who can write an inbox can make folders, and a descriptor
/// for each would let them fill the daemon's descriptor table. A folder below a root is opened
/// with `openat2(RESOLVE_BENEATH)` (or one name at a time with `O_NOFOLLOW`) from the root, so a
/// mailbox replaced by a symbolic link is never followed out of its inbox.
struct IntakeFolders {
    /// Open inbox roots, by path.
    var roots: [String: DirectoryHandle] = [:]
    /// Folders below the roots used last, by path, oldest first in ``recentOrder``.
    var recent: [String: DirectoryHandle] = [:]
    var recentOrder: [String] = []
    /// How many folders below the roots stay open between uses: enough for a burst that goes to
    /// a few mailboxes, few enough to be nothing beside the descriptor limit.
    static let recentLimit = 16

    /// The folder at `path`, below (or at) the inbox root `rootPath`.
    mutating func open(_ path: String, root rootPath: String) throws(Errno) -> DirectoryHandle {
        let root = try self.root(rootPath)
        guard path != rootPath else { return root }
        if let handle = recent[path] {
            recentOrder.removeAll { $0 == path }
            recentOrder.append(path)
            return handle
        }
        guard path.hasPrefix(rootPath + "/") else { throw .invalidArgument }
        let relative = String(path.dropFirst(rootPath.count + 1))
        let descriptor = try Self.openBeneath(root.descriptor, relative)
        let handle = DirectoryHandle(adopting: descriptor)
        recent[path] = handle
        recentOrder.append(path)
        if recentOrder.count > Self.recentLimit {
            // Dropped here only: a batch that still uses it keeps it open until it is done.
            recent[recentOrder.removeFirst()] = nil
        }
        return handle
    }

    /// The inbox root at `path`, opened once and held.
    mutating func root(_ path: String) throws(Errno) -> DirectoryHandle {
        if let root = roots[path] { return root }
        let root = DirectoryHandle(adopting: try FileDescriptor.openDirectory(atPath: FilePath(path)))
        roots[path] = root
        return root
    }

    /// Opens `relative` (names separated by `/`) below `root` without following any symbolic link.
    static func openBeneath(_ root: FileDescriptor, _ relative: String) throws(Errno) -> FileDescriptor {
        if let opened = try root.openBeneath(relative, .readOnly, options: .directory) { return opened }
        // No openat2 here: one name at a time, each with O_NOFOLLOW.
        var current: FileDescriptor?
        defer { current?.closeIgnoringErrors() }
        for name in relative.split(separator: "/") {
            guard let component = FilePath.Component(String(name)), component.kind == .regular else { throw .invalidArgument }
            let next = try (current ?? root).openDirectory(component)
            current?.closeIgnoringErrors()
            current = next
        }
        guard let opened = current else { throw .invalidArgument }
        current = nil
        return opened
    }

    /// Forgets the folder at `path` and everything below it (it went away or was replaced).
    mutating func forget(_ path: String) {
        roots[path] = nil
        let below = path + "/"
        for key in recent.keys where key == path || key.hasPrefix(below) { recent[key] = nil }
        recentOrder.removeAll { $0 == path || $0.hasPrefix(below) }
    }

    /// Lets go of every folder (handles still in use by deliveries close when those finish).
    mutating func removeAll() {
        roots = [:]
        recent = [:]
        recentOrder = []
    }
}
