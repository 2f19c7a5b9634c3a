import DocRouteTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Handlers on the real socket: launch, openURL, ack, redelivery, URL schemes, bad input.
@Suite(.serialized) struct SocketIntegrationTests {
    static let molecules = "com.sunsetlakesoftware.molecules"
    static let pdb = DeliveryIntegrationTests.pdb

    func subscribe(_ harness: DaemonHarness, _ bundle: String = molecules) throws -> (LineClient, [String: Any]) {
        let client = try LineClient(path: harness.socket)
        try client.send(["type": "subscribe", "id": "1", "bundleIdentifier": bundle])
        let reply = try #require(client.readMessage())
        return (client, reply)
    }

    @Test func launchWithoutWaitingDocumentsIsPlain() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        let client = try LineClient(path: harness.socket)
        defer { client.close() }
        try client.send(["type": "hello", "protocol": 1])
        let welcome = try #require(client.readMessage())
        #expect(welcome["type"] as? String == "welcome")
        #expect((welcome["daemon"] as? String)?.hasPrefix("docrouted/") == true)
        try client.send(["type": "subscribe", "id": "1", "bundleIdentifier": Self.molecules])
        let subscribed = try #require(client.readMessage())
        #expect(subscribed["type"] as? String == "subscribed")
        #expect(subscribed["pending"] as? Int == 0)
        #expect(client.readLineText() == #"{"type":"launch","launchOptions":{}}"#)
    }

    @Test func waitingDocumentsComeAsLaunchThenOpenURLInOrderAndAckedOnesNeverAgain() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        for index in 0..<3 { try harness.drop("doc\(index).pdb", Self.pdb, mailbox: "Mail") }
        #expect(harness.waitForInboxDrained())
        var (client, subscribed) = try subscribe(harness)
        #expect(subscribed["pending"] as? Int == 3)
        let launch = try #require(client.readMessage())
        #expect(launch["type"] as? String == "launch")
        let options = try #require(launch["launchOptions"] as? [String: Any])
        let url = try #require(options["UIApplicationLaunchOptionsURLKey"] as? String)
        #expect(url == "file://" + harness.sandbox(Self.molecules, mailbox: "Mail") + "/doc0.pdb")
        #expect(options["UIApplicationLaunchOptionsSourceApplicationKey"] as? String == "com.apple.mobilemail")
        let annotation = try #require(options["UIApplicationLaunchOptionsAnnotationKey"] as? [String: Any])
        #expect(annotation["mailbox"] as? String == "Mail")
        #expect(annotation["originalFilename"] as? String == "doc0.pdb")
        #expect(annotation["size"] as? Int == Self.pdb.count)
        #expect(launch["isFileURL"] as? Bool == true)
        #expect(launch["contentType"] as? String == "com.sunsetlakesoftware.molecules.pdb")
        let first = try #require(launch["deliveryID"] as? String)
        let second = try #require(client.readMessage())
        let third = try #require(client.readMessage())
        #expect(second["type"] as? String == "openURL")
        #expect((second["url"] as? String)?.hasSuffix("/doc1.pdb") == true)
        #expect((third["url"] as? String)?.hasSuffix("/doc2.pdb") == true)
        // Acknowledge the first only, then hang up: the other two come again, the oldest as launch.
        try client.send(["type": "ack", "deliveryID": first, "handled": true])
        // An ack for a delivery this connection never received.
        try client.send(["type": "ack", "id": "x", "deliveryID": "no-such-delivery", "handled": true])
        let notFound = try #require(client.readMessage())
        #expect(notFound["code"] as? String == "not-found")
        #expect(notFound["id"] as? String == "x")
        client.close()
        usleep(200_000)
        (client, subscribed) = try subscribe(harness)
        #expect(subscribed["pending"] as? Int == 2)
        let relaunch = try #require(client.readMessage())
        #expect(relaunch["deliveryID"] as? String == second["deliveryID"] as? String)
        let again = try #require(client.readMessage())
        #expect(again["deliveryID"] as? String == third["deliveryID"] as? String)
        // Live arrivals come as openURL while subscribed.
        try harness.drop("live.pdb", Self.pdb)
        let live = try #require(client.readMessage())
        #expect(live["type"] as? String == "openURL")
        #expect((live["url"] as? String)?.hasSuffix("/Inbox/live.pdb") == true)
        #expect(FileManager.default.fileExists(atPath: harness.sandbox(Self.molecules) + "/live.pdb"), "the file exists before any message names it")
        client.close()
    }

    @Test func unacknowledgedDeliveriesSurviveADaemonKill() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        try harness.drop("keep.pdb", Self.pdb)
        #expect(harness.waitForInboxDrained())
        var (client, subscribed) = try subscribe(harness)
        let launch = try #require(client.readMessage())
        let id = try #require(launch["deliveryID"] as? String, "\(subscribed) \(launch)\n\(harness.daemonLog.suffix(3000))")
        client.close()
        harness.crash()
        try harness.start()
        (client, _) = try subscribe(harness)
        let again = try #require(client.readMessage())
        #expect(again["type"] as? String == "launch")
        #expect(again["deliveryID"] as? String == id, "the delivery id never changes")
        client.close()
    }

    @Test func customURLSchemeArrivesIntact() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        let url = "todolist://www.acme.com?Quarterly%20Report#200806231300"
        let opener = try LineClient(path: harness.socket)
        try opener.send(["type": "open", "id": "2", "url": url])
        let opened = try #require(opener.readMessage())
        #expect(opened["type"] as? String == "opened", "\(opened)")
        #expect(opened["bundleIdentifier"] as? String == "com.acme.todolist")
        #expect(opened["contentType"] == nil)
        opener.close()
        let (client, _) = try subscribe(harness, "com.acme.todolist")
        let launch = try #require(client.readMessage())
        let options = try #require(launch["launchOptions"] as? [String: Any])
        #expect(options["UIApplicationLaunchOptionsURLKey"] as? String == url)
        #expect(launch["isFileURL"] as? Bool == false)
        #expect(launch["contentType"] == nil)
        #expect(launch["mailbox"] == nil)
        client.close()
    }

    @Test func openOfAFileCopiesItAndLeavesTheOriginal() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        let original = harness.root + "/shared/1abc.pdb"
        try FileManager.default.createDirectory(atPath: harness.root + "/shared", withIntermediateDirectories: true)
        try Data(Self.pdb).write(to: URL(fileURLWithPath: original))
        let client = try LineClient(path: harness.socket)
        defer { client.close() }
        try client.send(["type": "open", "id": "2", "url": "file://" + original, "mailbox": "Shared"])
        let opened = try #require(client.readMessage())
        #expect(opened["type"] as? String == "opened", "\(opened)")
        #expect(opened["contentType"] as? String == "com.sunsetlakesoftware.molecules.pdb")
        #expect(FileManager.default.contents(atPath: harness.sandbox(Self.molecules, mailbox: "Shared") + "/1abc.pdb") == Data(Self.pdb))
        #expect(FileManager.default.fileExists(atPath: original))
        try client.send(["type": "open", "id": "3", "url": "file://" + harness.root + "/missing.pdb"])
        #expect(client.readMessage()?["code"] as? String == "not-found")
        try client.send(["type": "open", "id": "4", "url": "nosuchscheme://x"])
        #expect(client.readMessage()?["code"] as? String == "no-handler")
    }

    @Test func badLinesGetBadRequestAndTheConnectionStaysUsable() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        let client = try LineClient(path: harness.socket)
        defer { client.close() }
        for line in ["not json", #"{"id":"1"}"#, #"{"type":"dance","id":"2"}"#, #"{"type":"subscribe","id":"3","bundleIdentifier":7}"#] {
            try client.sendRaw(Array(line.utf8) + [0x0A])
            let reply = try #require(client.readMessage(), "\(line)")
            #expect(reply["type"] as? String == "error")
            #expect(reply["code"] as? String == "bad-request", "\(line)")
        }
        try client.sendRaw([0xFF, 0xFE, 0x00, 0x13, 0x0A])
        #expect(client.readMessage()?["code"] as? String == "bad-request")
        try client.send(["type": "subscribe", "id": "5", "bundleIdentifier": "com.example.nobody"])
        #expect(client.readMessage()?["code"] as? String == "unknown-handler")
        try client.send(["type": "hello", "protocol": 9])
        #expect(client.readMessage()?["code"] as? String == "unsupported-protocol")
        // Still usable.
        try client.send(["type": "status", "id": "6"])
        let status = try #require(client.readMessage())
        #expect(status["type"] as? String == "status")
        let handlers = try #require(status["handlers"] as? [[String: Any]])
        #expect(handlers.contains { $0["bundleIdentifier"] as? String == Self.molecules })
        #expect((status["inboxes"] as? [[String: Any]])?.first?["path"] as? String == harness.inbox)
    }

    @Test func oversizedLineIsRefusedAndOthersAreServed() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        let big = try LineClient(path: harness.socket)
        defer { big.close() }
        // The daemon may hang up before all 2 MiB are sent; the error line comes first either way.
        try? big.sendRaw(Array(repeating: UInt8(ascii: "a"), count: 2 << 20) + [0x0A])
        #expect(big.readMessage()?["code"] as? String == "bad-request")
        let other = try LineClient(path: harness.socket)
        defer { other.close() }
        try other.send(["type": "hello", "protocol": 1])
        #expect(other.readMessage()?["type"] as? String == "welcome")
    }

    @Test func secondSubscriberIsRefused() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        let (first, _) = try subscribe(harness)
        defer { first.close() }
        let second = try LineClient(path: harness.socket)
        defer { second.close() }
        try second.send(["type": "subscribe", "id": "9", "bundleIdentifier": Self.molecules])
        let reply = try #require(second.readMessage())
        #expect(reply["code"] as? String == "already-subscribed")
        #expect(reply["id"] as? String == "9")
    }

    @Test func idleConnectionsAreCappedAndTheDaemonStillServes() throws {
        let harness = try DaemonHarness(extraConfig: "max_connections = 20")
        defer { harness.remove() }
        try harness.start()
        var idle: [LineClient] = []
        defer { idle.forEach { $0.close() } }
        for _ in 0..<20 { idle.append(try LineClient(path: harness.socket)) }
        let refused = try LineClient(path: harness.socket)
        #expect(refused.readMessage()?["type"] as? String == "error")
        refused.close()
        idle.removeLast().close()
        usleep(200_000)
        let served = try LineClient(path: harness.socket)
        defer { served.close() }
        try served.send(["type": "hello", "protocol": 1])
        #expect(served.readMessage()?["type"] as? String == "welcome")
    }

    @Test func aPythonHandlerWithOnlyItsStandardLibrary() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        try harness.drop("py1.pdb", Self.pdb)
        #expect(harness.waitForInboxDrained())
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", DaemonHarness.repositoryRoot + "/examples/python/handler.py",
                             "--socket", harness.socket, "--bundle", Self.molecules, "--count", "2"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        usleep(500_000)
        try harness.drop("py2.pdb", Self.pdb)
        process.waitUntilExit()
        let lines = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n")
        #expect(process.terminationStatus == 0)
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.first?.contains("launch") == true && lines.first?.contains("py1.pdb") == true)
        #expect(lines.last?.contains("openURL") == true && lines.last?.contains("py2.pdb") == true)
        // Both were acknowledged: nothing is pending.
        let (client, subscribed) = try subscribe(harness)
        #expect(subscribed["pending"] as? Int == 0)
        client.close()
    }

    @Test func thePythonExampleListsAndOpensInByDescriptor() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        let file = harness.root + "/1abc.pdb"
        try Data(Self.pdb).write(to: URL(fileURLWithPath: file))
        func run(_ arguments: [String]) throws -> (Int32, [String: Any]?) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", DaemonHarness.repositoryRoot + "/examples/python/handler.py", "--socket", harness.socket] + arguments
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, (try? JSONSerialization.jsonObject(with: data)) as? [String: Any])
        }
        let (listed, candidates) = try run(["--list", file])
        #expect(listed == 0)
        let entries = candidates?["candidates"] as? [[String: Any]] ?? []
        #expect(entries.first?["bundleIdentifier"] as? String == Self.molecules && entries.first?["default"] as? Bool == true, "\(String(describing: candidates))")
        #expect(entries.contains { $0["bundleIdentifier"] as? String == "org.docroute.textviewer" })
        let (opened, reply) = try run(["--open", file, "--with", "org.docroute.textviewer"])
        #expect(opened == 0)
        #expect(reply?["type"] as? String == "opened" && reply?["bundleIdentifier"] as? String == "org.docroute.textviewer", "\(String(describing: reply))")
        #expect(FileManager.default.contents(atPath: harness.sandbox("org.docroute.textviewer", mailbox: "Shared") + "/1abc.pdb") == Data(Self.pdb))
        let (refused, error) = try run(["--open", file, "--with", "org.docroute.archiver"])
        #expect(refused == 1 && error?["code"] as? String == "no-handler", "\(String(describing: error))")
        let (url, urlReply) = try run(["--list", "todolist://www.acme.com?x"])
        #expect(url == 0 && (urlReply?["candidates"] as? [[String: Any]])?.first?["bundleIdentifier"] as? String == "com.acme.todolist", "\(String(describing: urlReply))")
    }

    @Test func aHandlerIsLaunchedWhenADocumentArrives() throws {
        let harness = try DaemonHarness(launchCommands: true)
        defer { harness.remove() }
        // The sample Molecules manifest launches `docroutectl subscribe … --count 1`; point it at a script
        // that records what it received.
        let marker = harness.root + "/launched.txt"
        let script = harness.root + "/handler.sh"
        try """
            #!/bin/sh
            exec python3 \(DaemonHarness.repositoryRoot)/examples/python/handler.py --socket "$DOCROUTE_SOCKET" --bundle "$DOCROUTE_BUNDLE_IDENTIFIER" --count 1 > \(marker)
            """.write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        let manifest = harness.handlers + "/molecules.plist"
        var text = try String(contentsOfFile: manifest, encoding: .utf8)
        text = text.replacingOccurrences(of: "<string>/bin/sh</string>\n<string>-c</string>\n<string>exec docroutectl subscribe com.sunsetlakesoftware.molecules --count 1</string>", with: "<string>\(script)</string>")
        try text.write(toFile: manifest, atomically: true, encoding: .utf8)
        try harness.start()
        try harness.drop("launched.pdb", Self.pdb)
        #expect(harness.waitUntil(timeout: 20) { ((try? String(contentsOfFile: marker, encoding: .utf8)) ?? "").contains("launched.pdb") }, "\(harness.daemonLog.suffix(2000))")
    }
}
