import SystemPackage

/// An open folder shared by whoever needs it, closed when the last of them lets go.
///
/// Intake opens an inbox's mailbox folder when it takes files from it, not for as long as the
/// folder is watched: a dropper who makes thousands of folders must not make the daemon hold a
/// descriptor for each. A batch's deliveries keep the folder open until their sources are out of
/// it (after the commit, on another thread), so nobody has to know when that is.
package final class DirectoryHandle: Sendable {
    package let descriptor: FileDescriptor
    let closesOnRelease: Bool

    /// Takes over `descriptor`: it is closed with the last reference.
    package init(adopting descriptor: FileDescriptor) {
        self.descriptor = descriptor
        closesOnRelease = true
    }

    /// Uses a descriptor someone else keeps open (and closes) for longer than this handle lives.
    package init(borrowing descriptor: FileDescriptor) {
        self.descriptor = descriptor
        closesOnRelease = false
    }

    deinit {
        if closesOnRelease { descriptor.closeIgnoringErrors() }
    }
}
