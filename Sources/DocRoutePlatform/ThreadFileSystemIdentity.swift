import CDocRouteShim
import SystemPackage

/// The calling thread's file-system identity on Linux: the uid and gid the kernel checks file
/// access against (`setfsuid(2)`, `setfsgid(2)`) and the supplementary groups, set with the raw
/// `setgroups` system call. All three change the calling thread alone (glibc's `setgroups()` would
/// change every thread of the process), so a thread can open a file exactly as another user would
/// while the rest of the daemon goes on as itself.
///
/// Only a process with `CAP_SETUID`/`CAP_SETGID` (root) may take another identity.
package enum ThreadFileSystemIdentity {
    /// Sets the calling thread's supplementary groups.
    package static func setGroups(_ groups: [UInt32]) throws(Errno) {
        _ = try groups.withUnsafeBufferPointer { buffer in
            Errno.result { docroute_set_thread_groups(buffer.count, buffer.baseAddress) }
        }.get()
    }

    /// Sets the calling thread's file-system gid, then uid, and checks that each took:
    /// `setfsuid`/`setfsgid` report no error (they return the previous id either way), so the id
    /// is read back, and one that did not change throws `EPERM`.
    package static func setIDs(uid: UInt32, gid: UInt32) throws(Errno) {
        _ = docroute_set_fs_gid(gid)
        // An invalid id (-1) changes nothing and returns the id in effect.
        guard UInt32(bitPattern: docroute_set_fs_gid(UInt32.max)) == gid else { throw .notPermitted }
        _ = docroute_set_fs_uid(uid)
        guard UInt32(bitPattern: docroute_set_fs_uid(UInt32.max)) == uid else { throw .notPermitted }
    }
}
