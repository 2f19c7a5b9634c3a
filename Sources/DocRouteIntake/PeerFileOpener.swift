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
/// would let a client read what only docrouted's groups may (issue 16 item 5).
package enum PeerFileOpener {
    package static func open(_ path: [UInt8], as peer: PeerCredentials, maxSize: Int64) -> Result<IntakeFile, IntakeFile.Refusal> {
        guard path.first == UInt8(ascii: "/") else { return .failure(.vanished) }
        let folder = Array(path[..<(path.lastIndex(of: UInt8(ascii: "/")) ?? 0)])
        let name = Array(path[(path.lastIndex(of: UInt8(ascii: "/")).map { $0 + 1 } ?? 0)...])
        let sameUser = peer.uid == geteuid()
        guard sameUser || geteuid() == 0 else {
            // Without root the daemon cannot take another identity; refuse rather than guess.
            return .failure(.unreadable(errno: EACCES))
        }
        let groups = sameUser ? [] : UserDatabase.user(id: peer.uid).map { UserDatabase.groups(of: $0.name, primary: peer.gid) } ?? [peer.gid]
        let result = NIOLockedResult()
        let thread = Thread {
            var ownGroups: [gid_t] = []
            if !sameUser {
                let count = getgroups(0, nil)
                ownGroups = [gid_t](repeating: 0, count: Int(max(count, 0)))
                if count > 0 { ownGroups = Array(ownGroups.prefix(Int(getgroups(count, &ownGroups)))) }
                guard docroute_set_thread_groups(groups.count, groups) == 0 else {
                    // Never read with docrouted's own groups for someone else.
                    result.set(.failure(.unreadable(errno: EACCES)))
                    result.signal()
                    return
                }
                _ = docroute_set_fs_gid(peer.gid)
                _ = docroute_set_fs_uid(peer.uid)
            }
            let folderPath = folder.isEmpty ? "/" : InboxNames.display(folder)
            let directory = Glibc.open(folderPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if directory < 0 {
                result.set(.failure(errno == ENOENT ? .vanished : .unreadable(errno: errno)))
            } else {
                result.set(IntakeFile.open(name: name, in: directory, maxSize: maxSize))
                close(directory)
            }
            if !sameUser {
                _ = docroute_set_fs_uid(0)
                _ = docroute_set_fs_gid(0)
                _ = docroute_set_thread_groups(ownGroups.count, ownGroups)
            }
            result.signal()
        }
        thread.start()
        return result.wait()
    }

    final class NIOLockedResult: @unchecked Sendable {
        let semaphore = DispatchSemaphore(value: 0)
        var value: Result<IntakeFile, IntakeFile.Refusal> = .failure(.vanished)
        func set(_ value: Result<IntakeFile, IntakeFile.Refusal>) { self.value = value }
        func signal() { semaphore.signal() }
        func wait() -> Result<IntakeFile, IntakeFile.Refusal> {
            semaphore.wait()
            return value
        }
    }
}
