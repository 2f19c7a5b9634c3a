import DocRouteFleet
import Testing

/// Which host launches a handler connected nowhere: the same answer from every host's view.
struct FleetLaunchChoiceTests {
    typealias Candidate = FleetLaunchChoice.Candidate
    static let ocr = "com.example.OCR"

    static func host(_ name: String, live: Bool = true, subscribed: [String] = [], launchable: [String] = [], claimed: Int = 0) -> Candidate {
        Candidate(name: name, isLive: live, subscribed: subscribed, launchable: launchable, claimed: claimed)
    }

    @Test func theLiveHostWithTheLaunchCommandAndTheFewestClaimsLaunches() {
        let hosts = [
            Self.host("host-a"),
            Self.host("host-b", launchable: [Self.ocr], claimed: 2),
            Self.host("host-c", launchable: [Self.ocr], claimed: 5),
        ]
        #expect(FleetLaunchChoice.decide(Self.ocr, hosts: hosts) == .launch(on: "host-b"))
        // Every host reads the rows in its own order; the answer does not depend on it.
        #expect(FleetLaunchChoice.decide(Self.ocr, hosts: hosts.reversed()) == .launch(on: "host-b"))
        // Bundle identifiers are compared without regard to case.
        #expect(FleetLaunchChoice.decide("com.example.ocr", hosts: hosts) == .launch(on: "host-b"))
    }

    @Test func equalClaimsGoToTheFirstHostByName() {
        let hosts = [Self.host("host-c", launchable: [Self.ocr], claimed: 1), Self.host("host-b", launchable: [Self.ocr], claimed: 1)]
        #expect(FleetLaunchChoice.decide(Self.ocr, hosts: hosts) == .launch(on: "host-b"))
    }

    @Test func aHandlerSubscribedOnALiveHostIsNotLaunched() {
        let hosts = [Self.host("host-a", subscribed: ["com.example.ocr"]), Self.host("host-b", launchable: [Self.ocr])]
        #expect(FleetLaunchChoice.decide(Self.ocr, hosts: hosts) == .subscribed(on: "host-a"))
        // Subscribed on a host that is gone counts for nothing.
        let gone = [Self.host("host-a", live: false, subscribed: [Self.ocr]), Self.host("host-b", launchable: [Self.ocr])]
        #expect(FleetLaunchChoice.decide(Self.ocr, hosts: gone) == .launch(on: "host-b"))
    }

    @Test func aLaunchInProgressOnALiveHostIsNotRepeatedElsewhere() {
        // host-c became the least busy meanwhile, but host-b's launch may still subscribe.
        let hosts = [Self.host("host-b", launchable: [Self.ocr], claimed: 9), Self.host("host-c", launchable: [Self.ocr])]
        #expect(FleetLaunchChoice.decide(Self.ocr, hosts: hosts, launchInProgressOn: "host-b") == .launching(on: "host-b"))
        // A launch by a host that is gone since counts for nothing.
        let gone = [Self.host("host-b", live: false, launchable: [Self.ocr]), Self.host("host-c", launchable: [Self.ocr], claimed: 4)]
        #expect(FleetLaunchChoice.decide(Self.ocr, hosts: gone, launchInProgressOn: "host-b") == .launch(on: "host-c"))
    }

    @Test func aHandlerOnlyADeadHostCanLaunchWaitsAndSaysWhy() {
        let hosts = [Self.host("host-a"), Self.host("host-b", live: false, launchable: [Self.ocr])]
        let decision = FleetLaunchChoice.decide(Self.ocr, hosts: hosts)
        #expect(decision == .nowhere(launchableOn: ["host-b"]))
        #expect(decision.explanation.contains("only host-b can launch it") && decision.explanation.contains("not live"), "\(decision.explanation)")
        let none = FleetLaunchChoice.decide(Self.ocr, hosts: [Self.host("host-a")])
        #expect(none == .nowhere(launchableOn: []))
        #expect(none.explanation.contains("DocRouteLaunchCommand"), "\(none.explanation)")
    }
}
