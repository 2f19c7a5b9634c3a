import DocRouteTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Where a document went, as an operator asks the running daemon: declined documents in `status`,
/// and one document's story in the log under its delivery id and original name.
@Suite(.serialized) struct DocumentStoryIntegrationTests {
    static let pdfviewer = "org.docroute.pdfviewer"

    /// Subscribes as `bundle` and reads `subscribed` and the `launch`.
    static func subscribe(_ harness: DaemonHarness, _ bundle: String) throws -> (LineClient, [String: Any]) {
        let client = try LineClient(path: harness.socket)
        try client.send(["type": "subscribe", "id": "s", "bundleIdentifier": bundle])
        _ = try #require(client.readMessage())
        let launch = try #require(client.readMessage())
        return (client, launch)
    }

    static func deliveryID(_ event: [String: Any]) -> String? { event["deliveryID"] as? String }

    static func originalName(_ event: [String: Any]) -> String? {
        let annotation = (event["annotation"] as? [String: Any]) ?? ((event["launchOptions"] as? [String: Any])?["UIApplicationLaunchOptionsAnnotationKey"] as? [String: Any])
        return annotation?["originalFilename"] as? String
    }

    @Test func declinedDocumentsShowInStatusWithTheLastOnesName() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        let config = ["--config", harness.configPath]
        let pdf = Array("%PDF-1.4\n%âãÏÓ\n".utf8)
        for name in ["first.pdf", "second.pdf", "third.pdf"] {
            try harness.drop(name, pdf)
            #expect(harness.waitForInboxDrained(), "\(harness.daemonLog)")
        }
        let (client, launch) = try Self.subscribe(harness, Self.pdfviewer)
        defer { client.close() }
        var events = [launch]
        events += client.readMessages(upTo: 2)
        #expect(events.count == 3)
        // Declines the first two, takes the last: the handler's last decline is the second.
        for event in events {
            let declined = Self.originalName(event) != "third.pdf"
            try client.send(["type": "ack", "deliveryID": Self.deliveryID(event) ?? "", "handled": !declined])
        }
        usleep(300_000)
        let status = try CtlProcess.run(["status"] + config)
        #expect(status.status == 0, "\(status.error)")
        let lines = status.output.split(separator: "\n").map(String.init)
        let header = try #require(lines.first { $0.hasPrefix("HANDLER") }, "\(status.output)")
        let row = try #require(lines.first { $0.hasPrefix(Self.pdfviewer) }, "\(status.output)")
        let column = try #require(header.range(of: "DECLINED"), "\(status.output)")
        let start = header.distance(from: header.startIndex, to: column.lowerBound)
        #expect(row.dropFirst(start).hasPrefix("2 "), "\(status.output)")
        #expect(row.contains("declined 2 documents, last second.pdf at "), "\(status.output)")
        let json = try CtlProcess.run(["status", "--json"] + config)
        let object = try #require((try? JSONSerialization.jsonObject(with: Data(json.output.utf8))) as? [String: Any])
        let handler = try #require((object["handlers"] as? [[String: Any]])?.first { $0["bundleIdentifier"] as? String == Self.pdfviewer })
        #expect((handler["lastError"] as? String)?.hasPrefix("declined 2 documents, last second.pdf at ") == true, "\(handler)")
    }

    @Test func oneDocumentsLogLinesCarryItsDeliveryIDAndOriginalName() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        try harness.drop("story.pdf", Array("%PDF-1.4\n%âãÏÓ\n".utf8))
        #expect(harness.waitForInboxDrained(), "\(harness.daemonLog)")
        let (client, launch) = try Self.subscribe(harness, Self.pdfviewer)
        defer { client.close() }
        let id = try #require(Self.deliveryID(launch), "\(launch)")
        #expect(Self.originalName(launch) == "story.pdf")
        try client.send(["type": "ack", "deliveryID": id, "handled": true])
        let lines = { harness.daemonLog.split(separator: "\n").filter { $0.contains("delivery-id=\(id)") }.map(String.init) }
        #expect(harness.waitUntil(timeout: 10) { lines().contains { $0.contains(": acknowledged") } }, "\(harness.daemonLog)")
        for step in [": delivered", ": sent as launch", ": acknowledged"] {
            let line = lines().first { $0.contains(step) }
            #expect(line?.contains("original-name=story.pdf") == true, "\(step): \(lines())")
        }
    }
}
