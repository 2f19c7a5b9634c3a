import DocRouteHandlers
import DocRouteServer
import Testing

/// What a host of a fleet offers to launch: only handlers its launcher would start, so the fleet
/// never chooses a host that would refuse the launch and leave the documents waiting.
struct HandlerLauncherOfferTests {
    static func manifest(user: HandlerUser, command: [String]? = ["/usr/bin/ocr-handler"]) -> HandlerManifest {
        HandlerManifest(bundleIdentifier: "com.example.ocr", user: user, launchCommand: command)
    }

    @Test func noLaunchCommandIsNeverOffered() {
        #expect(!HandlerLauncher.wouldLaunch(Self.manifest(user: .name("ocr"), command: nil), uid: 1001, flagDirectory: nil, ownUID: 0))
        #expect(!HandlerLauncher.wouldLaunch(Self.manifest(user: .name("ocr"), command: nil), uid: 1001, flagDirectory: "/run/docroute/launch", ownUID: 1001))
    }

    @Test func aRootDaemonOffersEveryUserThatExistsAndNoUnknownOne() {
        #expect(HandlerLauncher.wouldLaunch(Self.manifest(user: .name("ocr")), uid: 1001, flagDirectory: nil, ownUID: 0))
        #expect(HandlerLauncher.wouldLaunch(Self.manifest(user: .name("root")), uid: 0, flagDirectory: nil, ownUID: 0))
        #expect(!HandlerLauncher.wouldLaunch(Self.manifest(user: .name("nosuchuser")), uid: nil, flagDirectory: nil, ownUID: 0))
    }

    @Test func aDaemonThatIsNotRootOffersOnlyItsOwnUsersHandlers() {
        #expect(HandlerLauncher.wouldLaunch(Self.manifest(user: .name("docroute")), uid: 998, flagDirectory: nil, ownUID: 998))
        #expect(!HandlerLauncher.wouldLaunch(Self.manifest(user: .name("ocr")), uid: 1001, flagDirectory: nil, ownUID: 998))
    }

    @Test func underSystemdEveryUserButRootIsOffered() {
        let flags = "/run/docroute/launch"
        #expect(HandlerLauncher.wouldLaunch(Self.manifest(user: .name("ocr")), uid: 1001, flagDirectory: flags, ownUID: 998))
        #expect(HandlerLauncher.wouldLaunch(Self.manifest(user: .uid(1001)), uid: 1001, flagDirectory: flags, ownUID: 998))
        #expect(!HandlerLauncher.wouldLaunch(Self.manifest(user: .name("root")), uid: 0, flagDirectory: flags, ownUID: 998))
        #expect(!HandlerLauncher.wouldLaunch(Self.manifest(user: .uid(0)), uid: 0, flagDirectory: flags, ownUID: 998))
    }
}
