import CDocRouteShim

/// The bits of an inotify watch's mask and of an event's (`inotify(7)`), taken from the C headers
/// through the shim rather than written out by number.
package struct InotifyMask: OptionSet, Sendable, Hashable {
    package let rawValue: UInt32
    package init(rawValue: UInt32) { self.rawValue = rawValue }

    /// `IN_CLOSE_WRITE`: a file open for writing was closed.
    package static let closeWrite = InotifyMask(rawValue: docroute_in_close_write)
    /// `IN_MOVED_TO`: a name was renamed into the folder.
    package static let movedTo = InotifyMask(rawValue: docroute_in_moved_to)
    /// `IN_MOVED_FROM`: a name was renamed out of the folder.
    package static let movedFrom = InotifyMask(rawValue: docroute_in_moved_from)
    /// `IN_DELETE`: a name was removed from the folder.
    package static let delete = InotifyMask(rawValue: docroute_in_delete)
    /// `IN_CREATE`: a name was created in the folder.
    package static let create = InotifyMask(rawValue: docroute_in_create)
    /// `IN_DELETE_SELF`: the watched folder itself was removed.
    package static let deleteSelf = InotifyMask(rawValue: docroute_in_delete_self)
    /// `IN_MOVE_SELF`: the watched folder itself was renamed.
    package static let moveSelf = InotifyMask(rawValue: docroute_in_move_self)
    /// `IN_Q_OVERFLOW`: the kernel's queue overflowed and events were lost.
    package static let queueOverflow = InotifyMask(rawValue: docroute_in_q_overflow)
    /// `IN_ISDIR`: the event's name is a folder.
    package static let isDirectory = InotifyMask(rawValue: docroute_in_isdir)
    /// `IN_IGNORED`: the watch was removed (the kernel's last event for it).
    package static let ignored = InotifyMask(rawValue: docroute_in_ignored)
    /// `IN_ONLYDIR`: watch the path only if it is a folder.
    package static let onlyDirectory = InotifyMask(rawValue: docroute_in_onlydir)
    /// `IN_DONT_FOLLOW`: do not follow a symbolic link as the path's last component.
    package static let dontFollow = InotifyMask(rawValue: docroute_in_dont_follow)
    /// `IN_EXCL_UNLINK`: no events for names after they were removed from the folder.
    package static let excludeUnlinked = InotifyMask(rawValue: docroute_in_excl_unlink)
}
