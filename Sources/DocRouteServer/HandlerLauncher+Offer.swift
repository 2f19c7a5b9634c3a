import DocRouteConfiguration
import DocRouteHandlers
import DocRoutePlatform

extension HandlerLauncher {
    /// Whether a launcher would start the handler of `manifest`, its user resolved to `uid` (nil:
    /// no user of this system), without trying: what a host of a fleet offers to launch, so the
    /// fleet does not choose a host that would refuse. The refusals of ``launchIfNeeded(_:)``, its
    /// backoff aside: no launch command; under systemd (`flagDirectory`), a user with no unit
    /// instance of its own (root); otherwise a user that is not one, or another user than
    /// docrouted's (`ownUID`) when that is not root.
    package static func wouldLaunch(_ manifest: HandlerManifest, uid: UInt32?, flagDirectory: String?,
                                    ownUID: UInt32 = ProcessIdentity.effectiveUserID) -> Bool {
        guard manifest.launchCommand != nil else { return false }
        if flagDirectory != nil {
            return HandlerAccount.unitInstance(for: manifest.user) != nil && uid != 0
        }
        guard let uid else { return false }
        return ownUID == 0 || uid == ownUID
    }
}
