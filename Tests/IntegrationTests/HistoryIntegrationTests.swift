import DocRouteTestSupport
import Foundation
import Testing

/// `docroutectl history` and `redeliver` against a real docrouted: a dropped file's story over the
/// socket and from the ledger file with the daemon stopped, and a declined document sent again.
@Suite(.serialized) struct HistoryIntegrationTests {
    static let molecules = DeliveryIntegrationTests.molecules
    static let pdb = DeliveryIntegrationTests.pdb

    static func documents(_ output: String) -> [[String: Any]] {
        output.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
    }

    static func events(_ document: [String: Any]) -> [String] {
        (document["events"] as? [[String: Any]] ?? []).compactMap { $0["event"] as? String }
    }

    /// Subscribes as molecules and reads the reply and the plain launch.
    static func subscribe(_ harness: DaemonHarness) throws -> LineClient {
        let client = try LineClient(path: harness.socket)
        try client.send(["type": "subscribe", "id": "1", "bundleIdentifier": molecules])
        #expect(client.readMessage()?["type"] as? String == "subscribed")
        #expect(client.readMessage()?["type"] as? String == "launch")
        return client
    }

    @Test func aDroppedFilesStoryOverTheSocketAndFromTheLedgerFile() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        let client = try Self.subscribe(harness)
        defer { client.close() }
        try harness.drop("1abc.pdb", Self.pdb)
        let event = try #require(client.readMessage())
        #expect(event["type"] as? String == "openURL")
        let deliveryID = try #require(event["deliveryID"] as? String)

        var told: (status: Int32?, output: String, error: String) = (nil, "", "")
        #expect(harness.waitUntil(timeout: 15) {
            told = (try? CtlProcess.run(["history", "1abc.pdb", "--config", harness.configPath])) ?? (nil, "", "")
            return told.output.contains(" told ")
        }, "\(told)")
        #expect(told.status == 0, "\(told.error)")
        let lines = told.output.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("1abc.pdb  delivery \(deliveryID)  owed  (\(Self.molecules))") == true, "\(told.output)")
        let words = lines.dropFirst().map { $0.dropFirst(23).split(separator: " ").first.map(String.init) ?? "" }
        for word in ["seen", "typed", "routed", "committed", "told"] {
            #expect(words.contains(word), "\(word) missing from \(told.output)")
        }
        #expect(told.output.contains("inbox \(harness.inbox)"), "\(told.output)")
        #expect(told.output.contains("by openURL"), "\(told.output)")
        #expect(told.output.contains("path \(harness.sandbox(Self.molecules))"), "\(told.output)")

        try client.send(["type": "ack", "deliveryID": deliveryID, "handled": true])
        var online: (status: Int32?, output: String, error: String) = (nil, "", "")
        #expect(harness.waitUntil(timeout: 15) {
            online = (try? CtlProcess.run(["history", "1abc.pdb", "--config", harness.configPath])) ?? (nil, "", "")
            return online.output.contains("acknowledged\n") || online.output.hasSuffix("acknowledged")
        }, "\(online)")
        #expect(online.output.contains("source freed"), "\(online.output)")
        // The log tells the same story under the id as the wire writes it, so one journalctl
        // match (DOCROUTE_DELIVERY_ID=…) finds every line: committed, sent, acknowledged.
        let logged = harness.daemonLog.split(separator: "\n").filter { $0.contains("delivery-id=\(deliveryID)") }
        for word in ["delivered", "sent", "acknowledged"] {
            #expect(logged.contains { $0.contains(word) }, "no '\(word)' line with delivery-id=\(deliveryID):\n\(harness.daemonLog.suffix(3000))")
        }
        #expect(!harness.daemonLog.contains(deliveryID.uppercased()), "the id in another case: \(harness.daemonLog.suffix(3000))")

        let json = try CtlProcess.run(["history", deliveryID, "--json", "--config", harness.configPath])
        #expect(json.status == 0, "\(json.error)")
        let documents = Self.documents(json.output)
        #expect(documents.count == 1, "\(json.output)")
        #expect((documents.first?["deliveryID"] as? String)?.lowercased() == deliveryID.lowercased())
        #expect(documents.first?["state"] as? String == "acknowledged")
        #expect(documents.first?["bundleIdentifier"] as? String == Self.molecules)
        #expect(Array(Self.events(documents.first ?? [:]).prefix(4)) == ["seen", "typed", "routed", "committed"])

        let nothing = try CtlProcess.run(["history", "nosuch.pdb", "--config", harness.configPath])
        #expect(nothing.status == 1)
        #expect(nothing.error.contains("no document matches the name nosuch.pdb"), "\(nothing.error)")

        // With docrouted stopped, the ledger file tells the same story.
        #expect(harness.stop(timeout: 15))
        let offline = try CtlProcess.run(["history", "1abc.pdb", "--config", harness.configPath])
        #expect(offline.status == 0, "\(offline.error)")
        #expect(offline.output == online.output)
        let offlineJSON = try CtlProcess.run(["history", deliveryID, "--json", "--offline", "--config", harness.configPath])
        #expect(Self.documents(offlineJSON.output).first?["state"] as? String == "acknowledged", "\(offlineJSON)")
        #expect(offlineJSON.output == json.output)
    }

    @Test func aDeclinedDocumentRedeliveredArrivesAsANewEvent() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        let client = try Self.subscribe(harness)
        defer { client.close() }
        try harness.drop("2abc.pdb", Self.pdb)
        let first = try #require(client.readMessage())
        let deliveryID = try #require(first["deliveryID"] as? String)
        try client.send(["type": "ack", "deliveryID": deliveryID, "handled": false])
        #expect(harness.waitUntil(timeout: 15) {
            let result = try? CtlProcess.run(["history", "--state", "declined", "--json", "--config", harness.configPath])
            return Self.documents(result?.output ?? "").count == 1
        })

        let redelivered = try CtlProcess.run(["redeliver", "--declined", "--config", harness.configPath])
        #expect(redelivered.status == 0, "\(redelivered)")
        #expect(redelivered.output.contains("redelivered: \(deliveryID)"), "\(redelivered.output)")
        let again = try #require(client.readMessage())
        #expect(again["type"] as? String == "openURL")
        #expect(again["deliveryID"] as? String == deliveryID)
        #expect(again["url"] as? String == first["url"] as? String)

        let story = try CtlProcess.run(["history", deliveryID, "--config", harness.configPath])
        #expect(story.output.contains(" declined"), "\(story.output)")
        #expect(story.output.contains(" redelivered "), "\(story.output)")
        #expect(story.output.split(separator: "\n").first?.contains("  owed  ") == true, "\(story.output)")

        // Taken this time; then its copy goes, and it cannot be sent again.
        try client.send(["type": "ack", "deliveryID": deliveryID, "handled": true])
        #expect(harness.waitUntil(timeout: 15) {
            let result = try? CtlProcess.run(["history", deliveryID, "--json", "--config", harness.configPath])
            return Self.documents(result?.output ?? "").first?["state"] as? String == "acknowledged"
        })
        let copy = try #require(Self.documents(try CtlProcess.run(["history", deliveryID, "--json", "--config", harness.configPath]).output)
            .first?["finalPath"] as? String)
        try FileManager.default.removeItem(atPath: copy)
        let gone = try CtlProcess.run(["redeliver", deliveryID, "--config", harness.configPath])
        #expect(gone.status == 1)
        #expect(gone.error.contains("the copy \(copy) is gone"), "\(gone.error)")
        let unknown = try CtlProcess.run(["redeliver", UUID().uuidString, "--config", harness.configPath])
        #expect(unknown.status == 1)
        #expect(unknown.error.contains("no delivery"), "\(unknown.error)")
    }

    @Test func aMailPartSkippedThenReleasedShowsBothInItsHistory() throws {
        let (harness, maildir) = try MaildirIntegrationTests.harness(catchAll: false)
        defer { harness.remove() }
        let name = "1700000001.M2P1.host"
        try FileManager.default.createDirectory(atPath: maildir + "/new", withIntermediateDirectories: true)
        try Data(QuarantineReleaseIntegrationTests.message.utf8).write(to: URL(fileURLWithPath: maildir + "/new/" + name))
        try harness.start()
        let config = ["--config", harness.configPath]
        let entry = harness.quarantine + "/INBOX/\(name)_part2.mailpart"
        #expect(harness.waitFor(entry), "\(harness.daemonLog)")

        var skipped: [[String: Any]] = []
        #expect(harness.waitUntil(timeout: 15) {
            skipped = Self.documents((try? CtlProcess.run(["history", "numbers.qqq", "--json"] + config))?.output ?? "")
            return !skipped.isEmpty
        })
        #expect(skipped.first?["state"] as? String == "skipped", "\(skipped)")
        #expect(skipped.first?["messageID"] as? String == "<sheet@example.org>")
        #expect(skipped.first?["partPath"] as? String == "2")
        let text = try CtlProcess.run(["history", "numbers.qqq"] + config)
        #expect(text.output.contains("message <sheet@example.org>, part 2"), "\(text.output)")
        #expect(text.output.contains(" skipped      reason no handler claims"), "\(text.output)")

        try QuarantineReleaseIntegrationTests.installDataHandlers(harness)
        let released = try CtlProcess.run(["quarantine", "release", "--to", QuarantineReleaseIntegrationTests.other, entry] + config)
        #expect(released.status == 0, "\(released.error)")
        let both = Self.documents(try CtlProcess.run(["history", "numbers.qqq", "--json"] + config).output)
        #expect(both.count == 2, "\(both)")
        let delivered = try #require(both.first { $0["deliveryID"] != nil }, "\(both)")
        #expect(delivered["bundleIdentifier"] as? String == QuarantineReleaseIntegrationTests.other)
        #expect(delivered["messageID"] as? String == "<sheet@example.org>")
        #expect(delivered["partPath"] as? String == "2")
        #expect(both.contains { $0["state"] as? String == "skipped" })
        // The delivered part is seen in its message, not in the scratch file it was decoded into.
        let timeline = try CtlProcess.run(["history", "numbers.qqq"] + config).output
        #expect(timeline.contains("mail \(harness.root)") && !timeline.contains("mail-scratch") && !timeline.contains("source freed"), "\(timeline)")
    }

    @Test func aTimeThatDoesNotReadSaysWhatIsAccepted() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        let result = try CtlProcess.run(["history", "--since", "yesterday", "--config", harness.configPath])
        #expect(result.status == 64)
        #expect(result.error.contains("--since yesterday: not a time"), "\(result.error)")
        #expect(result.error.contains("HH:MM") && result.error.contains("90s, 15m, 1h, 2d"), "\(result.error)")
        let state = try CtlProcess.run(["history", "--state", "lost", "--config", harness.configPath])
        #expect(state.status == 64)
        #expect(state.error.contains("acknowledged, declined"), "\(state.error)")
    }
}
