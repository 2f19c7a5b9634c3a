import DocRoutePlatform
import Logging

/// The administrators' group (`admin_group`), looked up once per load and reload of the
/// configuration, so that answering `status` needs nothing but the peer's credentials: no user
/// database call on the request path, where a flood of `status` requests would mean a lookup each.
package struct AdministratorGroup: Sendable, Hashable {
    /// The configured name, for messages; nil when none is configured.
    var name: String?
    /// Its gid; nil when none is configured or the group does not exist.
    var gid: UInt32?
    /// The uids of the users the group file lists as members (supplementary members).
    var memberUIDs: Set<UInt32> = []

    /// Looks the group and its members up (reentrant calls). A configured group that does not
    /// exist admits root only, and says so in the log: at start (`previous` nil) and when a reload
    /// finds it gone, not again at every reload that finds it still missing (each `docroutectl
    /// default set` is a reload).
    package static func resolve(_ name: String?, previous: AdministratorGroup? = nil, logger: Logger) -> AdministratorGroup {
        guard let name else { return AdministratorGroup(name: nil, gid: nil) }
        let wasMissing = previous.map { $0.name == name && $0.gid == nil } ?? false
        guard let group = UserDatabase.group(named: name) else {
            if !wasMissing {
                logger.warning("admin_group '\(name)' does not exist: status is for root only until it does and docrouted reloads (SIGHUP)")
            }
            return AdministratorGroup(name: name, gid: nil)
        }
        if wasMissing {
            logger.notice("admin_group '\(name)' exists now: its members may ask for status")
        }
        let members = Set(group.members.compactMap { UserDatabase.user(named: $0)?.uid })
        return AdministratorGroup(name: name, gid: group.gid, memberUIDs: members)
    }

    /// Root, a peer whose gid is the group, or a listed member.
    package func admits(_ peer: PeerCredentials) -> Bool {
        if peer.uid == 0 { return true }
        guard let gid else { return false }
        return peer.gid == gid || memberUIDs.contains(peer.uid)
    }
}
