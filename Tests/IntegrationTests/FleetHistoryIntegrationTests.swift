import DocRouteTestSupport
import Foundation
import Testing

/// `docroutectl history` in a fleet: a document dropped on host A and acknowledged on host B has
/// its whole story on either host (seen, typed, routed and committed on A, claimed, written, told
/// and acknowledged on B, its source freed on A), each event naming its host when that is not the
/// host asked; with PostgreSQL stopped, a host answers from its own ledger and says so.
@Suite(.serialized) struct FleetHistoryIntegrationTests {
    static let molecules = "com.sunsetlakesoftware.molecules"
    static let bytes = Array("HEADER    PROTEIN STORY\nATOM      1  N   ALA A   1      11.104   6.134  -6.504  1.00  0.00           N\nEND\n".utf8)

    /// Two hosts on one fresh database, the handler subscribed on B, `story.pdb` dropped on A and
    /// acknowledged on B; `body` gets the hosts, the server and the delivery id.
    func withAcknowledgedDocument(_ body: (DaemonHarness, DaemonHarness, PostgresServer, String) throws -> Void) throws {
        let fleet = try FleetHarness()
        defer { fleet.tearDown() }
        let intake = try fleet.host("host-a", leaseSeconds: 6)
        let delivering = try fleet.host("host-b", leaseSeconds: 6)
        try intake.start()
        try delivering.start()
        try #require(fleet.waitForHosts(["host-a", "host-b"]), "\(intake.daemonLog.suffix(2000))\n\(delivering.daemonLog.suffix(2000))")

        let handler = HistoryHandler(socket: delivering.socket, bundleIdentifier: Self.molecules)
        handler.start()
        defer { _ = handler.stop() }
        try #require(intake.waitUntil(timeout: 15) { handler.subscriptionCount > 0 }, "the handler did not subscribe on host B")
        handler.dropped("story.pdb", bytes: Self.bytes)
        try intake.drop("story.pdb", Self.bytes)
        let acknowledged = intake.waitUntil(timeout: 60) { handler.everyDropAcknowledged }
        try #require(acknowledged, "\(handler.snapshot.summary)\nA:\n\(intake.daemonLog.suffix(3000))\nB:\n\(delivering.daemonLog.suffix(3000))")
        let deliveryID = try #require(handler.snapshot.announcements.first?.deliveryID).lowercased()
        try body(intake, delivering, fleet.server, deliveryID)
    }

    static func documents(_ output: String) -> [[String: Any]] {
        output.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
    }

    /// Each event of a JSON document as `event` or `event@host`.
    static func events(_ document: [String: Any]) -> [String] {
        (document["events"] as? [[String: Any]] ?? []).compactMap { event in
            guard let name = event["event"] as? String else { return nil }
            return (event["host"] as? String).map { "\(name)@\($0)" } ?? name
        }
    }

    /// `text` with each run of spaces made one: the timeline pads its words to a column.
    static func squeezed(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ") }.joined(separator: "\n")
    }

    /// `history` on `harness` until `done` holds of its output (the last events reach the
    /// database a moment after the acknowledgement).
    static func history(_ arguments: [String], on harness: DaemonHarness,
                        until done: (String) -> Bool) -> (status: Int32?, output: String, error: String) {
        var result: (status: Int32?, output: String, error: String) = (nil, "", "")
        _ = harness.waitUntil(timeout: 20) {
            result = (try? CtlProcess.run(["history"] + arguments + ["--config", harness.configPath])) ?? (nil, "", "")
            return done(result.output)
        }
        return result
    }

    @Test func aDocumentDroppedOnAAndAcknowledgedOnBHasItsWholeStoryOnEitherHost() throws {
        try withAcknowledgedDocument { intake, delivering, _, deliveryID in
            // On A, in words: what A did without a host, what B did on host B.
            let onA = Self.history(["story.pdb"], on: intake) { Self.squeezed($0).contains("acknowledged on host host-b") && $0.contains(" told ") }
            #expect(onA.status == 0, "\(onA)")
            let lines = Self.squeezed(onA.output).split(separator: "\n").map(String.init)
            #expect(lines.first?.hasPrefix("story.pdb delivery \(deliveryID) acknowledged (\(Self.molecules))") == true, "\(onA.output)")
            for expected in ["seen inbox \(intake.inbox)", "routed handler \(Self.molecules)", "committed into the fleet",
 "claimed on host host-b, attempt 1", "written on host host-b, path \(delivering.sandbox(Self.molecules))",
 "told on host host-b, by openURL", "acknowledged on host host-b", "source freed"] {
                #expect(lines.contains { $0.contains(expected) }, "'\(expected)' missing on host A:\n\(onA.output)")
            }
            #expect(!lines.contains { $0.contains("seen") && $0.contains("host-") }, "A's own events name no host:\n\(onA.output)")

            // On B, the same story, the other way round.
            let onB = Self.history(["story.pdb"], on: delivering) { Self.squeezed($0).contains("source freed on host host-a") }
            #expect(onB.status == 0, "\(onB)")
            for expected in ["seen on host host-a, inbox \(intake.inbox)", "committed on host host-a, into the fleet",
 "claimed attempt 1", "written path \(delivering.sandbox(Self.molecules))", "told by openURL",
 "source freed on host host-a"] {
                #expect(Self.squeezed(onB.output).contains(expected), "'\(expected)' missing on host B:\n\(onB.output)")
            }
            #expect(onB.output.split(separator: "\n").last?.hasSuffix("acknowledged") == true || onB.output.contains("  acknowledged\n"),
                    "B's own acknowledgement names no host:\n\(onB.output)")
            #expect(onB.output.components(separatedBy: "  seen ").count == 2, "one 'seen', A's, not B's scratch file:\n\(onB.output)")

            // --json on both, by delivery id: the same events, each host named where it is not the one asked.
            let jsonA = Self.documents(Self.history([deliveryID, "--json"], on: intake) { !$0.isEmpty }.output)
            let jsonB = Self.documents(Self.history([deliveryID, "--json"], on: delivering) { !$0.isEmpty }.output)
            #expect(jsonA.count == 1 && jsonB.count == 1, "\(jsonA)\n\(jsonB)")
            let eventsA = jsonA.first.map(Self.events) ?? []
            let eventsB = jsonB.first.map(Self.events) ?? []
            #expect(Array(eventsA.prefix(4)) == ["seen", "typed", "routed", "committed"], "\(eventsA)")
            for expected in ["claimed@host-b", "written@host-b", "notified@host-b", "acknowledged@host-b", "sourceReclaimed"] {
                #expect(eventsA.contains(expected), "\(expected) missing on host A: \(eventsA)")
            }
            #expect(Array(eventsB.prefix(4)) == ["seen@host-a", "typed@host-a", "routed@host-a", "committed@host-a"], "\(eventsB)")
            for expected in ["claimed", "written", "notified", "acknowledged", "sourceReclaimed@host-a"] {
                #expect(eventsB.contains(expected), "\(expected) missing on host B: \(eventsB)")
            }
            for document in jsonA + jsonB {
                #expect(document["state"] as? String == "acknowledged")
                #expect((document["deliveryID"] as? String)?.lowercased() == deliveryID)
                #expect(document["fleetUnread"] == nil)
            }
        }
    }

    @Test func withPostgreSQLStoppedHistoryAnswersFromThisHostsLedgerAndSaysSo() throws {
        try withAcknowledgedDocument { intake, delivering, server, deliveryID in
            // Every event in the database first, so that what follows is only the stop's doing.
            _ = Self.history(["story.pdb"], on: delivering) { Self.squeezed($0).contains("source freed on host host-a") }
            try server.pause()
            let text = try CtlProcess.run(["history", "story.pdb", "--config", delivering.configPath])
            #expect(text.status == 0, "\(text)")
            #expect(text.output.hasPrefix("the fleet's database at"), "\(text.output)")
            #expect(text.output.contains("could not be read"), "\(text.output)")
            #expect(text.output.contains("this host's ledger alone is shown"), "\(text.output)")
            #expect(text.output.contains("story.pdb  delivery \(deliveryID)  acknowledged"), "\(text.output)")
            for word in ["committed", "told", "acknowledged"] {
                #expect(text.output.contains("  \(word)"), "B's own '\(word)' missing:\n\(text.output)")
            }
            #expect(!text.output.contains("claimed"), "nothing of the fleet's events is shown without the database:\n\(text.output)")

            let json = try CtlProcess.run(["history", deliveryID, "--json", "--config", delivering.configPath])
            #expect(json.status == 0, "\(json)")
            let documents = Self.documents(json.output)
            #expect(documents.count == 1, "\(json.output)")
            #expect((documents.first?["fleetUnread"] as? String)?.contains("could not be read") == true, "\(json.output)")
            #expect(json.error.contains("could not be read"), "\(json.error)")

            // A delivered nothing itself: its ledger has nothing of the document, and it says why.
            let onA = try CtlProcess.run(["history", "story.pdb", "--config", intake.configPath])
            #expect(onA.status == 1, "\(onA)")
            #expect(onA.error.contains("could not be read"), "\(onA.error)")
            #expect(onA.error.contains("no document matches the name story.pdb"), "\(onA.error)")
        }
    }
}
