import DocRouteHandlers
import DocRoutePlatform
import Foundation

/// Who a handler is on this host: its user and group, the owner its copies get, its systemd unit
/// instance, and the access docrouted keeps to what it hands over.
///
/// Resolved once per handler reload (``RoutingSnapshot``), not once per file: the user database
/// is read when the manifests are, and delivery is given the answer.
///
/// In Configuration because it joins a manifest's ``HandlerUser`` (DocRouteHandlers) with the user
/// database and the process's identity (DocRoutePlatform): the first target that has both, so the
/// launcher in DocRouteServer needs no Intake.
package enum HandlerAccount {
    /// The owner a handler's copies get: its own user, when that is not docrouted's and docrouted
    /// may give files away (root, or CAP_CHOWN as docroute.service grants); nil otherwise.
    ///
    /// The group is the handler's own too: docrouted's group is the admin group, which gets
    /// status, never documents. Not running as root (docroute.service: User=docroute with
    /// CAP_CHOWN), docrouted keeps its way in through an ACL entry for its uid alone
    /// (``sandboxAccessUserID``), without CAP_DAC_OVERRIDE.
    package static func copyOwner(for user: HandlerUser) -> (uid: UInt32, gid: UInt32)? {
        guard let (uid, gid) = resolve(user), uid != ProcessIdentity.effectiveUserID, mayChangeOwners else { return nil }
        return (uid, gid)
    }

    /// Folders in a sandbox: the handler's alone (a `mode_t`).
    package static let sandboxFolderMode: UInt32 = 0o700

    /// Who gets an ACL entry on what docrouted hands to handlers: itself, when it is not root.
    package static var sandboxAccessUserID: UInt32? {
        let uid = ProcessIdentity.effectiveUserID
        return uid == 0 ? nil : uid
    }

    /// Root, or CAP_CHOWN in the effective set (bit 0 of CapEff in /proc/self/status).
    package static let mayChangeOwners: Bool = {
        if ProcessIdentity.effectiveUserID == 0 { return true }
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("CapEff:") }),
              let mask = UInt64(line.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? "", radix: 16)
        else { return false }
        return mask & 1 != 0
    }()

    /// The user's uid and gid (a bare uid's group is its passwd entry's, or the uid itself).
    package static func resolve(_ user: HandlerUser) -> (uid: UInt32, gid: UInt32)? {
        switch user {
        case .uid(let uid):
            return (uid, UserDatabase.user(id: uid)?.gid ?? uid)
        case .name(let name):
            return UserDatabase.user(named: name).map { ($0.uid, $0.gid) }
        }
    }

    /// The `docroute-handler@INSTANCE` instance that runs a handler of this user under systemd:
    /// the user's name or uid; nil for root or a name systemd would not take.
    package static func unitInstance(for user: HandlerUser) -> String? {
        switch user {
        case .uid(let uid):
            return uid == 0 ? nil : String(uid)
        case .name(let name):
            // The portable user names of useradd and systemd-sysusers: letters, digits, '_', '-' and
            // '.', not starting with '-' or '.'.
            let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")
            guard name != "root", !name.isEmpty, name.count <= 32, name.allSatisfy(allowed.contains),
                  let first = name.first, first != "-", first != "." else { return nil }
            return name
        }
    }
}
