import DocRouteTestSupport
import Testing

/// The fault tests' history checker (Tests/DocRouteTestSupport/DeliveryHistory.swift) must catch
/// what it is there to catch: a checker that passes everything would make every fault test pass.
struct DeliveryHistoryTests {
    static let first = Array("HEADER    first\n".utf8)
    static let second = Array("HEADER    second\n".utf8)
    static let sandbox = "/c/com.example/Documents/Inbox/Inbox"

    /// Two documents dropped, each announced once with its bytes, acknowledged, in the sandbox once.
    static func soundHistory() -> DeliveryHistory {
        var history = DeliveryHistory()
        history.dropped("a.pdb", bytes: first)
        history.dropped("b.pdb", bytes: second)
        history.announced(.init(type: "launch", deliveryID: "id-a", path: sandbox + "/a.pdb", originalFilename: "a.pdb",
                                observedSHA256: DeliveryHistory.sha256(first)))
        history.acknowledged("id-a")
        history.announced(.init(type: "openURL", deliveryID: "id-b", path: sandbox + "/b.pdb", originalFilename: "b.pdb",
                                observedSHA256: DeliveryHistory.sha256(second)))
        history.acknowledged("id-b")
        history.sandbox = ["a.pdb": DeliveryHistory.sha256(first), "b.pdb": DeliveryHistory.sha256(second)]
        return history
    }

    @Test func aSoundHistoryPasses() {
        #expect(Self.soundHistory().violations() == [])
    }

    /// The same delivery sent again after a restart (its ack not yet durable) and acknowledged
    /// again is at-least-once delivery, not a duplicate.
    @Test func aDeliverySentAgainUnderItsOwnIDPasses() {
        var history = Self.soundHistory()
        history.announced(.init(type: "launch", deliveryID: "id-b", path: Self.sandbox + "/b.pdb", originalFilename: "b.pdb",
                                observedSHA256: DeliveryHistory.sha256(Self.second)))
        history.acknowledged("id-b")
        #expect(history.violations() == [])
    }

    @Test func aPlantedLossFails() {
        var history = DeliveryHistory()
        history.dropped("a.pdb", bytes: Self.first)
        history.dropped("b.pdb", bytes: Self.second)
        history.announced(.init(type: "openURL", deliveryID: "id-a", path: Self.sandbox + "/a.pdb", originalFilename: "a.pdb",
                                observedSHA256: DeliveryHistory.sha256(Self.first)))
        history.acknowledged("id-a")
        history.sandbox = ["a.pdb": DeliveryHistory.sha256(Self.first)]
        let problems = history.violations()
        #expect(problems.contains { $0.contains("b.pdb was never announced") }, "\(problems)")
    }

    @Test func aPlantedDuplicateFails() {
        var history = Self.soundHistory()
        history.announced(.init(type: "openURL", deliveryID: "id-b2", path: Self.sandbox + "/b-1.pdb", originalFilename: "b.pdb",
                                observedSHA256: DeliveryHistory.sha256(Self.second)))
        history.acknowledged("id-b2")
        history.sandbox["b-1.pdb"] = DeliveryHistory.sha256(Self.second)
        let problems = history.violations()
        #expect(problems.contains { $0.contains("b.pdb was delivered 2 times") }, "\(problems)")
        #expect(problems.contains { $0.contains("b.pdb has 2 acknowledged deliveries") }, "\(problems)")
        #expect(problems.contains { $0.contains("the sandbox holds one document 2 times") }, "\(problems)")
    }

    /// A duplicate only on disk (a second copy under a real name nobody was told of) fails too.
    @Test func aPlantedSecondCopyOnDiskFails() {
        var history = Self.soundHistory()
        history.sandbox["a-1.pdb"] = DeliveryHistory.sha256(Self.first)
        #expect(history.violations().contains { $0.contains("a-1.pdb") })
    }

    @Test func anAnnouncedMissingOrIncompleteFileFails() {
        var history = Self.soundHistory()
        history.announced(.init(type: "openURL", deliveryID: "id-a", path: Self.sandbox + "/a.pdb", originalFilename: "a.pdb",
                                observedSHA256: nil))
        history.announced(.init(type: "openURL", deliveryID: "id-b", path: Self.sandbox + "/b.pdb", originalFilename: "b.pdb",
                                observedSHA256: DeliveryHistory.sha256(Self.second.dropLast(3))))
        let problems = history.violations()
        #expect(problems.contains { $0.contains("which did not exist") }, "\(problems)")
        #expect(problems.contains { $0.contains("did not hold b.pdb's bytes") }, "\(problems)")
    }

    @Test func anInventedDeliveryAndAnUnacknowledgedOneFail() {
        var history = Self.soundHistory()
        history.announced(.init(type: "openURL", deliveryID: "id-x", path: Self.sandbox + "/x.pdb", originalFilename: "x.pdb",
                                observedSHA256: DeliveryHistory.sha256(Self.first)))
        history.acknowledged("id-never-sent")
        let problems = history.violations()
        #expect(problems.contains { $0.contains("never dropped") }, "\(problems)")
        #expect(problems.contains { $0.contains("acknowledged id-never-sent") }, "\(problems)")

        var unacknowledged = DeliveryHistory()
        unacknowledged.dropped("a.pdb", bytes: Self.first)
        unacknowledged.announced(.init(type: "openURL", deliveryID: "id-a", path: Self.sandbox + "/a.pdb", originalFilename: "a.pdb",
                                       observedSHA256: DeliveryHistory.sha256(Self.first)))
        unacknowledged.sandbox = ["a.pdb": DeliveryHistory.sha256(Self.first)]
        #expect(unacknowledged.violations().contains { $0.contains("0 acknowledged deliveries") })
    }

    @Test func aSourceLeftInTheInboxFails() {
        var history = Self.soundHistory()
        history.leftInInbox = ["b.pdb"]
        #expect(history.violations() == ["left in the inbox: b.pdb"])
    }

    @Test func aQuarantinedDocumentFails() {
        var history = Self.soundHistory()
        history.quarantined = ["Inbox/c.pdb": "not delivered: it is a symbolic link"]
        #expect(history.violations() == ["quarantined: Inbox/c.pdb (not delivered: it is a symbolic link)"])
    }

    /// In a fleet: the delivery of b.pdb went to host B, whose lease ran out; host C announced it
    /// again under the same id and both hold a copy. At least once, so sound.
    static func fleetHistory() -> DeliveryHistory {
        var history = DeliveryHistory()
        history.dropped("a.pdb", bytes: first)
        history.dropped("b.pdb", bytes: second)
        history.announced(.init(type: "openURL", deliveryID: "id-a", path: sandbox + "/a.pdb", originalFilename: "a.pdb",
                                observedSHA256: DeliveryHistory.sha256(first), host: "B"))
        history.acknowledged("id-a")
        history.announced(.init(type: "openURL", deliveryID: "id-b", path: sandbox + "/b.pdb", originalFilename: "b.pdb",
                                observedSHA256: DeliveryHistory.sha256(second), host: "B"))
        history.announced(.init(type: "openURL", deliveryID: "id-b", path: sandbox + "/b.pdb", originalFilename: "b.pdb",
                                observedSHA256: DeliveryHistory.sha256(second), host: "C"))
        history.acknowledged("id-b")
        history.sandboxes = ["B": ["a.pdb": DeliveryHistory.sha256(first), "b.pdb": DeliveryHistory.sha256(second)],
                             "C": ["b.pdb": DeliveryHistory.sha256(second)]]
        return history
    }

    @Test func aFleetRedeliveryOnAnotherHostPasses() {
        #expect(Self.fleetHistory().violations() == [])
    }

    @Test func aPlantedFleetLossAndDuplicateFail() {
        var lost = Self.fleetHistory()
        lost.dropped("c.pdb", bytes: Array("HEADER    third\n".utf8))
        #expect(lost.violations() == ["c.pdb was never announced with its bytes (lost)"])

        var twice = Self.fleetHistory()
        twice.announced(.init(type: "openURL", deliveryID: "id-b-again", path: Self.sandbox + "/b-1.pdb", originalFilename: "b.pdb",
                              observedSHA256: DeliveryHistory.sha256(Self.second), host: "C"))
        twice.acknowledged("id-b-again")
        twice.sandboxes["C"]?["b-1.pdb"] = DeliveryHistory.sha256(Self.second)
        let problems = twice.violations()
        #expect(problems.contains { $0.contains("b.pdb was delivered 2 times") }, "\(problems)")
        #expect(problems.contains { $0.contains("C's sandbox holds one document 2 times") }, "\(problems)")
    }
}
