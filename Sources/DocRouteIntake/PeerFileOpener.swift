import CDocRouteShim
import DocRoutePlatform
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Opens a file with a client's file-system identity, so docrouted never reads for a client a
/// file the client could not read itself.
///
/// On Linux the file-system uid and gid are per thread (`setfsuid`), so the open runs on a
/// short-lived thread of its own that takes the peer's identity and drops it again: its uid and
/// gid, and its supplementary groups (those the group database gives the peer's user, from
/// `getgrouplist`; only the peer's gid when the uid has no user), set with the raw `setgroups`
/// system call, which changes the calling thread alone. Keeping docrouted's own groups there
/// would let a client read what only docrouted's groups may.
package enum PeerFileOpener {
    /// Opens `path` as `peer` would. The caller's task waits without holding a thread of the
    /// cooperative pool: the open, and the group database lookups, run on the thread of their own.
    /// `maxSize` and `maxAllocation` are those of ``IntakeFile/open(name:in:maxSize:maxAllocation:headLength:)``.
    package static func open(_ path: [UInt8], as peer: PeerCredentials, maxSize: Int64,
                             maxAllocation: Int64 = .max) async -> Result<IntakeFile, IntakeFile.Refusal> {
        guard path.first == UInt8(ascii: "/") else { return .failure(.vanished) }
        let sameUser = peer.uid == geteuid()
        guard sameUser || geteuid() == 0 else {
            // Without root the daemon cannot take another identity; refuse rather than guess.
            return .failure(.unreadable(errno: EACCES))
        }
        return await withCheckedContinuation { continuation in
            let thread = Thread {
                continuation.resume(returning: openAsPeer(path, as: peer, sameUser: sameUser, maxSize: maxSize, maxAllocation: maxAllocation))
            }
            thread.name = "docroute-peer-open"
            thread.start()
        }
    }

    /// On the opening thread: takes the peer's identity, opens, and drops the identity again.
    private static func openAsPeer(_ path: [UInt8], as peer: PeerCredentials, sameUser: Bool, maxSize: Int64,
                                   maxAllocation: Int64) -> Result<IntakeFile, IntakeFile.Refusal> {
        let folder = Array(path[..<(path.lastIndex(of: UInt8(ascii: "/")) ?? 0)])
        let name = Array(path[(path.lastIndex(of: UInt8(ascii: "/")).map { $0 + 1 } ?? 0)...])
        var ownGroups: [gid_t] = []
        if !sameUser {
            let groups = UserDatabase.user(id: peer.uid).map { UserDatabase.groups(of: $0.name, primary: peer.gid) } ?? [peer.gid]
            let count = getgroups(0, nil)
            ownGroups = [gid_t](repeating: 0, count: Int(max(count, 0)))
            if count > 0 { ownGroups = Array(ownGroups.prefix(Int(getgroups(count, &ownGroups)))) }
            guard docroute_set_thread_groups(groups.count, groups) == 0 else {
                // Never read with docrouted's own groups for someone else.
                return .failure(.unreadable(errno: EACCES))
            }
            _ = docroute_set_fs_gid(peer.gid)
            _ = docroute_set_fs_uid(peer.uid)
        }
        defer {
            if !sameUser {
                _ = docroute_set_fs_uid(0)
                _ = docroute_set_fs_gid(0)
                _ = docroute_set_thread_groups(ownGroups.count, ownGroups)
            }
        }
        let folderPath = folder.isEmpty ? "/" : InboxNames.display(folder)
        let directory = Glibc.open(folderPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else {
            return .failure(errno == ENOENT ? .vanished : .unreadable(errno: errno))
        }
        defer { close(directory) }
        return IntakeFile.open(name: name, in: directory, maxSize: maxSize, maxAllocation: maxAllocation)
    }
}
