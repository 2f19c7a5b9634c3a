import DocRoutePlatform
import Foundation
import SystemPackage

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
        let ownUID = ProcessIdentity.effectiveUserID
        let sameUser = peer.uid == ownUID
        guard sameUser || ownUID == 0 else {
            // Without root the daemon cannot take another identity; refuse rather than guess.
            return .failure(.unreadable(errno: Errno.permissionDenied.rawValue))
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
        var ownGroups: [UInt32] = []
        if !sameUser {
            let groups = UserDatabase.user(id: peer.uid).map { UserDatabase.groups(of: $0.name, primary: peer.gid) } ?? [peer.gid]
            do throws(Errno) {
                ownGroups = try ProcessIdentity.supplementaryGroups()
            } catch {
                // Nothing is changed yet; without its own groups the thread could not be given
                // them back, so it takes no other identity.
                return .failure(.unreadable(errno: Errno.permissionDenied.rawValue))
            }
            do throws(Errno) {
                try ThreadFileSystemIdentity.setGroups(groups)
                try ThreadFileSystemIdentity.setIDs(uid: peer.uid, gid: peer.gid)
            } catch {
                // Never read with docrouted's own groups or ids for someone else.
                restoreIdentity(groups: ownGroups)
                return .failure(.unreadable(errno: Errno.permissionDenied.rawValue))
            }
        }
        defer {
            if !sameUser { restoreIdentity(groups: ownGroups) }
        }
        let folderPath = folder.isEmpty ? "/" : InboxNames.display(folder)
        let directory: FileDescriptor
        do throws(Errno) {
            // Resolved as the peer's own open would be, symbolic links included: the thread is the
            // peer now, so the kernel checks each folder on the way as the peer's.
            directory = try FileDescriptor.openDirectoryFollowingLinks(atPath: FilePath(folderPath))
        } catch .noSuchFileOrDirectory {
            return .failure(.vanished)
        } catch {
            return .failure(.unreadable(errno: error.rawValue))
        }
        defer { directory.closeIgnoringErrors() }
        return IntakeFile.open(name: name, in: directory.rawValue, maxSize: maxSize, maxAllocation: maxAllocation)
    }

    /// Gives the opening thread docrouted's own identity back. The thread ends after this one open
    /// and is never reused, so an identity that cannot be restored goes with it: nothing to report.
    private static func restoreIdentity(groups: [UInt32]) {
        try? ThreadFileSystemIdentity.setIDs(uid: 0, gid: 0)
        try? ThreadFileSystemIdentity.setGroups(groups)
    }
}
