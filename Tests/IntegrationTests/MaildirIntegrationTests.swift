import DocRouteTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The mail drop end to end: messages composed with Python's `email` package and delivered into a
/// Maildir the way an MDA does (Python's `mailbox.Maildir`: `tmp/`, then a rename into `new/`),
/// read by the real docrouted, their attachments checked byte for byte in the sandboxes.
@Suite(.serialized) struct MaildirIntegrationTests {
    static let compose = Fixtures.mailFolder + "/compose.py"
    static let catchAll = "org.docroute.test.everything"

    /// A harness with a Maildir inbox at `<root>/Maildir` and, when asked, a handler that takes any
    /// file (rank Alternate, so the sample handlers keep their own types).
    static func harness(catchAll: Bool) throws -> (DaemonHarness, String) {
        let harness = try DaemonHarness(extraInbox: """
            [[inbox]]
            path = "{ROOT}/Maildir"
            kind = "maildir"
            source_application = "com.apple.mobilemail"
            """)
        if catchAll {
            try catchAllManifest.write(toFile: harness.handlers + "/everything.plist", atomically: true, encoding: .utf8)
        }
        return (harness, harness.root + "/Maildir")
    }

    /// Claims public.data and, for attached messages (com.apple.mail.email), public.message too:
    /// which a handler claiming public.data alone gets them is `anAttachedMessageReachesAHandlerClaimingPublicData`.
    static let catchAllManifest = manifest(catchAll, types: ["public.data", "public.message"])

    static func manifest(_ bundle: String, types: [String], rank: String = "Alternate") -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0"><dict>
          <key>CFBundleIdentifier</key><string>\(bundle)</string>
          <key>CFBundleDocumentTypes</key><array><dict>
            <key>CFBundleTypeRole</key><string>Viewer</string>
            <key>LSHandlerRank</key><string>\(rank)</string>
            <key>LSItemContentTypes</key><array>\(types.map { "<string>\($0)</string>" }.joined())</array>
          </dict></array>
        </dict></plist>
        """
    }

    static func python(_ arguments: [String]) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [compose] + arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw HarnessError("compose.py \(arguments) exited \(process.terminationStatus)") }
        return data
    }

    /// Every file delivered into `mailbox`, in every sandbox, by content.
    static func delivered(_ harness: DaemonHarness, mailbox: String) -> [(path: String, bytes: Data)] {
        var found: [(String, Data)] = []
        for container in (try? FileManager.default.contentsOfDirectory(atPath: harness.containers)) ?? [] {
            let folder = harness.containers + "/" + container + "/Documents/Inbox/" + mailbox
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where !name.hasPrefix(".") {
                if let bytes = FileManager.default.contents(atPath: folder + "/" + name) { found.append((folder + "/" + name, bytes)) }
            }
        }
        return found
    }

    struct Expected {
        var mailbox: String
        var messageName: String
        var envelope: [String: Any]
        var attachments: [[String: Any]]
    }

    static func expectations(_ output: Data) throws -> [Expected] {
        let object = try #require(try JSONSerialization.jsonObject(with: output) as? [String: [[String: String]]])
        var result: [Expected] = []
        for (mailbox, messages) in object {
            for message in messages {
                let folder = try #require(message["expected"])
                let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/expected.json"))
                let expected = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
                result.append(Expected(mailbox: mailbox, messageName: try #require(message["name"]),
                                       envelope: expected["envelope"] as? [String: Any] ?? [:],
                                       attachments: expected["attachments"] as? [[String: Any]] ?? []))
            }
        }
        return result
    }

    @Test func composedMailReachesTheHandlersByteForByteAndIsMarkedRead() throws {
        let (harness, maildir) = try Self.harness(catchAll: true)
        defer { harness.remove() }
        try harness.start()
        let out = harness.root + "/expected"
        let messages = try Self.expectations(Self.python(["maildir", maildir, out]))
        #expect(messages.count == 4)

        var perMailbox: [String: [Data]] = [:]
        for message in messages {
            for attachment in message.attachments {
                let file = try #require(attachment["file"] as? String)
                perMailbox[message.mailbox, default: []].append(try Data(contentsOf: URL(fileURLWithPath: file)))
            }
        }
        #expect(perMailbox.keys.sorted() == ["INBOX", "Work.Reports", "Été"])
        // Every attachment, once, in the mailbox it arrived in; nothing else.
        for (mailbox, payloads) in perMailbox {
            #expect(harness.waitUntil(timeout: 30) { Self.delivered(harness, mailbox: mailbox).count >= payloads.count },
                    "mailbox \(mailbox): \(Self.delivered(harness, mailbox: mailbox).count) of \(payloads.count)\n\(harness.daemonLog)")
            var remaining = Self.delivered(harness, mailbox: mailbox).map(\.bytes)
            for payload in payloads {
                if let index = remaining.firstIndex(of: payload) {
                    remaining.remove(at: index)
                } else {
                    Issue.record("mailbox \(mailbox): an attachment of \(payload.count) bytes is missing or altered")
                }
            }
            #expect(remaining.isEmpty, "mailbox \(mailbox): \(remaining.count) unexpected files")
        }
        // The messages stay, moved to cur/ with S, as a mail client marks them read.
        let folders = ["INBOX": "", "Été": ".&AMk-t&AOk-", "Work.Reports": ".Work.Reports"]
        for message in messages {
            let folder = maildir + (folders[message.mailbox].map { $0.isEmpty ? "" : "/" + $0 } ?? "")
            #expect(harness.waitFor(folder + "/cur/" + message.messageName + ":2,S"), "\(message.messageName) not in cur/ with S")
            #expect(!FileManager.default.fileExists(atPath: folder + "/new/" + message.messageName))
        }
        let flags = try JSONSerialization.jsonObject(with: Self.python(["flags", maildir])) as? [String: [[String: String]]]
        for (_, entries) in flags ?? [:] {
            for entry in entries { #expect(entry["subdir"] == "cur" && entry["flags"] == "S") }
        }

        // The annotation carries the mail's envelope and the part's own name.
        let client = try LineClient(path: harness.socket)
        defer { client.close() }
        try client.send(["type": "subscribe", "id": "1", "bundleIdentifier": Self.catchAll])
        let subscribed = try #require(client.readMessage())
        let pending = try #require(subscribed["pending"] as? Int)
        #expect(pending > 0)
        var events: [[String: Any]] = []
        for _ in 0..<pending {
            guard let event = client.readMessage() else { break }
            events.append(event)
        }
        let legacy = try #require(messages.first { ($0.envelope["messageID"] as? String) == "<legacy-2@example.cz>" })
        let annotations = events.compactMap { event -> [String: Any]? in
            if let options = event["launchOptions"] as? [String: Any] {
                #expect(options["UIApplicationLaunchOptionsSourceApplicationKey"] as? String == "com.apple.mobilemail")
                return options["UIApplicationLaunchOptionsAnnotationKey"] as? [String: Any]
            }
            #expect(event["sourceApplication"] as? String == "com.apple.mobilemail")
            return event["annotation"] as? [String: Any]
        }
        let spreadsheet = try #require(annotations.first { ($0["originalFilename"] as? String) == "Tabulka č. 1.xls" },
                                       "events: \(events)")
        #expect(spreadsheet["from"] as? String == legacy.envelope["from"] as? String)
        #expect(spreadsheet["subject"] as? String == "Отчёт за март")
        #expect(spreadsheet["messageID"] as? String == "<legacy-2@example.cz>")
        #expect(spreadsheet["date"] as? String == "Wed, 02 Apr 2025 09:30:00 +0000")
        #expect(spreadsheet["mailbox"] as? String != nil)
        #expect(spreadsheet["size"] as? Int == 10_000)
    }

    @Test func aRestartAfterACrashBeforeMarkingReadDeliversNothingTwice() throws {
        let (harness, maildir) = try Self.harness(catchAll: true)
        defer { harness.remove() }
        try harness.start()
        let out = harness.root + "/expected"
        let messages = try Self.expectations(Self.python(["maildir", maildir, out]))
        let total = messages.reduce(0) { $0 + $1.attachments.count }
        let countAll = { ["INBOX", "Été", "Work.Reports"].reduce(0) { $0 + Self.delivered(harness, mailbox: $1).count } }
        #expect(harness.waitUntil(timeout: 30) { countAll() == total })
        let inboxMessage = try #require(messages.first { $0.mailbox == "INBOX" })
        #expect(harness.waitFor(maildir + "/cur/" + inboxMessage.messageName + ":2,S"))
        harness.crash()
        // As if the crash came after the ledger commit and before the move to cur/.
        #expect(rename(maildir + "/cur/" + inboxMessage.messageName + ":2,S", maildir + "/new/" + inboxMessage.messageName) == 0)
        try harness.start()
        #expect(harness.waitFor(maildir + "/cur/" + inboxMessage.messageName + ":2,S"))
        Thread.sleep(forTimeInterval: 0.5)
        #expect(countAll() == total, "attachments delivered again after the restart")
    }

    @Test func aMessageWithAnUnclaimedAttachmentIsStillMarkedReadAndMalformedMailStays() throws {
        let (harness, maildir) = try Self.harness(catchAll: false)
        defer { harness.remove() }
        // Waiting before the daemon starts: the start-up scan takes them.
        let empty = maildir + "/new/1700000000.M1P1.host"
        let spreadsheetOnly = maildir + "/new/1700000001.M2P1.host"
        try FileManager.default.createDirectory(atPath: maildir + "/new", withIntermediateDirectories: true)
        try Data().write(to: URL(fileURLWithPath: empty))
        let body = """
            From: a@example.org\r
            Subject: numbers\r
            Message-ID: <sheet@example.org>\r
            MIME-Version: 1.0\r
            Content-Type: multipart/mixed; boundary="b"\r
            \r
            --b\r
            Content-Type: text/plain\r
            \r
            see attached\r
            --b\r
            Content-Type: application/x-unknown-thing\r
            Content-Disposition: attachment; filename="numbers.qqq"\r
            Content-Transfer-Encoding: base64\r
            \r
            AAECAwQFBgcICQ==\r
            --b\r
            Content-Type: application/pdf\r
            Content-Disposition: attachment; filename="../../etc/report.pdf"\r
            Content-Transfer-Encoding: base64\r
            \r
            JVBERi0xLjQKJcOkw7zDtsOfCg==\r
            --b--\r

            """
        try Data(body.utf8).write(to: URL(fileURLWithPath: spreadsheetOnly))
        try harness.start()
        #expect(harness.waitFor(maildir + "/cur/1700000001.M2P1.host:2,S"), "\(harness.daemonLog)")
        // The PDF arrives under a safe name; the part nobody claims is recorded in the quarantine as
        // a part of its message (which is read all the same: a mail client reads cur/ too).
        let pdfs = Self.delivered(harness, mailbox: "INBOX")
        #expect(pdfs.count == 1)
        // "../../etc/report.pdf" never acts as a path: the copy sits in the mailbox folder itself.
        let copy = try #require(pdfs.first?.path)
        #expect(URL(fileURLWithPath: copy).deletingLastPathComponent().path == harness.containers + "/org.docroute.pdfviewer/Documents/Inbox/INBOX")
        #expect(copy.hasSuffix("report.pdf") && !URL(fileURLWithPath: copy).lastPathComponent.contains(".."), "\(copy)")
        #expect(pdfs.first?.bytes == Data(base64Encoded: "JVBERi0xLjQKJcOkw7zDtsOfCg=="))
        #expect(harness.daemonLog.contains("attachment quarantined (its bytes stay in the message): no handler claims"))
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: harness.quarantine + "/INBOX")) ?? []) == ["1700000001.M2P1.host_part2.mailpart"])
        // The empty message is left in new/, reported once even after a rescan.
        #expect(FileManager.default.fileExists(atPath: empty))
        Thread.sleep(forTimeInterval: 0.5)
        let reports = harness.daemonLog.split(separator: "\n").filter { $0.contains("malformed message left in new/") && $0.contains("1700000000.M1P1.host") }.count
        #expect(reports == 1, "\(harness.daemonLog)")
        // …and counted in status, on the Maildir's entry.
        let client = try LineClient(path: harness.socket)
        defer { client.close() }
        try client.send(["type": "status", "id": "s"])
        let status = try #require(client.readMessage())
        let inboxes = try #require(status["inboxes"] as? [[String: Any]])
        let entry = try #require(inboxes.first { ($0["path"] as? String) == maildir })
        #expect(entry["unreadableMessages"] as? Int == 1)
    }

    /// A message with `parts` attachments, each a distinct payload (so each copy can be matched).
    static func message(_ index: Int, parts: Int) -> (bytes: Data, payloads: [Data]) {
        var text = "From: crash@example.org\r\nSubject: crash \(index)\r\nMessage-ID: <crash-\(index)@example.org>\r\n"
            + "MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"c\"\r\n\r\n--c\r\nContent-Type: text/plain\r\n\r\nhi\r\n"
        var payloads: [Data] = []
        for part in 0..<parts {
            let payload = Data("message \(index) part \(part) ".utf8) + Data(repeating: UInt8(truncatingIfNeeded: index &+ part), count: 20_000 + index)
            payloads.append(payload)
            text += "--c\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=\"p\(part).bin\"\r\n"
                + "Content-Transfer-Encoding: base64\r\n\r\n" + payload.base64EncodedString(options: .lineLength76Characters) + "\r\n"
        }
        return (Data((text + "--c--\r\n").utf8), payloads)
    }

    @Test func killedAtRandomMomentsEveryAttachmentArrivesExactlyOnce() throws {
        let (harness, maildir) = try Self.harness(catchAll: true)
        defer { harness.remove() }
        let count = 90
        let restarts = 3
        var expected: [Data] = []
        var names: [String] = []
        try harness.start()
        for round in 0...restarts {
            for index in (round * count / (restarts + 1))..<((round + 1) * count / (restarts + 1)) {
                let (bytes, payloads) = Self.message(index, parts: 3)
                expected += payloads
                let name = "\(1_700_000_000 + index).M\(index)P1.crash"
                names.append(name)
                try bytes.write(to: URL(fileURLWithPath: maildir + "/tmp/" + name))
                #expect(rename(maildir + "/tmp/" + name, maildir + "/new/" + name) == 0)
            }
            guard round < restarts else { break }
            usleep(useconds_t.random(in: 1_000...200_000))
            harness.crash()
            try harness.start()
        }
        #expect(harness.waitUntil(timeout: 120) {
            names.allSatisfy { FileManager.default.fileExists(atPath: maildir + "/cur/" + $0 + ":2,S") }
        }, "\(harness.daemonLog.suffix(3000))")
        var delivered = Self.delivered(harness, mailbox: "INBOX")
        #expect(delivered.count == expected.count, "each attachment exactly once: \(delivered.count) of \(expected.count)")
        for payload in expected {
            if let index = delivered.firstIndex(where: { $0.bytes == payload }) {
                delivered.remove(at: index)
            } else {
                Issue.record("an attachment of \(payload.count) bytes is missing")
            }
        }
        // Scratch files go once their copies are committed, just after the message is marked read.
        let scratch = { (try? FileManager.default.contentsOfDirectory(atPath: harness.root + "/state/mail-scratch")) ?? [] }
        #expect(harness.waitUntil(timeout: 10) { scratch().isEmpty }, "scratch files left: \(scratch().prefix(5))")
    }

    // MARK: Damaged parts and attached messages (hand-written messages of Fixtures/defects)

    static let defects = Fixtures.mailFolder + "/defects/"

    /// Puts a hand-written message into `new/` as an MDA does: written in `tmp/`, then renamed.
    static func deliver(_ fixture: String, into maildir: String, as name: String) throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: defects + fixture))
        try bytes.write(to: URL(fileURLWithPath: maildir + "/tmp/" + name))
        #expect(rename(maildir + "/tmp/" + name, maildir + "/new/" + name) == 0)
    }

    /// What Python's `email` finds in a hand-written message: part path to (file name, bytes).
    static func pythonParts(_ fixture: String, _ harness: DaemonHarness) throws -> [String: (name: String?, bytes: Data)] {
        let out = harness.root + "/expected-" + fixture
        _ = try python(["expect", defects + fixture, out])
        let data = try Data(contentsOf: URL(fileURLWithPath: out + "/expected.json"))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var parts: [String: (String?, Data)] = [:]
        for attachment in object["attachments"] as? [[String: Any]] ?? [] {
            let path = try #require(attachment["partPath"] as? String)
            parts[path] = (attachment["fileName"] as? String, try Data(contentsOf: URL(fileURLWithPath: try #require(attachment["file"] as? String))))
        }
        return parts
    }

    /// Reads events from a subscribed connection until `count` came (or a read times out),
    /// acknowledging each.
    static func readEvents(_ client: LineClient, count: Int) throws -> [[String: Any]] {
        var events: [[String: Any]] = []
        while events.count < count, let event = client.readMessage() {
            guard event["type"] as? String == "openURL" || event["type"] as? String == "launch" else { continue }
            if let id = event["deliveryID"] as? String {
                events.append(event)
                try client.send(["type": "ack", "deliveryID": id, "handled": true])
            }
        }
        return events
    }

    static func annotation(_ event: [String: Any]) -> [String: Any] {
        if let options = event["launchOptions"] as? [String: Any] {
            return options["UIApplicationLaunchOptionsAnnotationKey"] as? [String: Any] ?? [:]
        }
        return event["annotation"] as? [String: Any] ?? [:]
    }

    @Test func damagedPartsAreDeliveredWithTheirDamageInTheAnnotation() throws {
        let (harness, maildir) = try Self.harness(catchAll: true)
        defer { harness.remove() }
        try harness.start()
        let pdfViewer = "org.docroute.pdfviewer"
        var clients: [LineClient] = []
        defer { clients.forEach { $0.close() } }
        for bundle in [Self.catchAll, pdfViewer] {
            let client = try LineClient(path: harness.socket, timeout: 20)
            clients.append(client)
            try client.send(["type": "subscribe", "id": "1", "bundleIdentifier": bundle])
            #expect(client.readMessage()?["type"] as? String == "subscribed")
            _ = client.readMessage() // the plain launch: nothing was waiting
        }

        // Running, so each part comes as openURL: scan-1.bin and scan-2.bin to the catch-all,
        // cover.pdf and photo.jpg to the PDF viewer (it claims image/jpeg), notes.txt to the text viewer.
        try Self.deliver("missing-padding.eml", into: maildir, as: "1700000100.M1P1.pad")
        try Self.deliver("cut-short.eml", into: maildir, as: "1700000101.M1P1.cut")
        let events = try Self.readEvents(clients[0], count: 2) + Self.readEvents(clients[1], count: 2)
        #expect(events.count == 4, "\(harness.daemonLog)")
        #expect(events.allSatisfy { $0["type"] as? String == "openURL" })
        let byName = Dictionary(events.map { (Self.annotation($0)["originalFilename"] as? String ?? "", $0) }, uniquingKeysWith: { first, _ in first })
        #expect(Self.annotation(try #require(byName["scan-1.bin"]))["damage"] as? [String] == ["bad-padding"])
        #expect(Self.annotation(try #require(byName["scan-2.bin"]))["damage"] as? [String] == ["bad-padding"])
        #expect(Self.annotation(try #require(byName["photo.jpg"]))["damage"] as? [String] == ["truncated-encoding", "unterminated"])
        // A part that was fine says nothing of damage.
        #expect(Self.annotation(try #require(byName["cover.pdf"]))["damage"] == nil)

        // Every byte Python's email decodes is in the sandbox.
        let padded = try Self.pythonParts("missing-padding.eml", harness)
        let cut = try Self.pythonParts("cut-short.eml", harness)
        let sandbox = harness.sandbox(Self.catchAll, mailbox: "INBOX")
        #expect(FileManager.default.contents(atPath: sandbox + "/scan-1.bin") == padded["2"]?.bytes)
        #expect(FileManager.default.contents(atPath: sandbox + "/scan-2.bin") == padded["3"]?.bytes)
        let viewerSandbox = harness.sandbox(pdfViewer, mailbox: "INBOX")
        #expect(FileManager.default.contents(atPath: viewerSandbox + "/photo.jpg") == cut["2"]?.bytes)
        #expect(FileManager.default.contents(atPath: viewerSandbox + "/cover.pdf") == padded["4"]?.bytes)

        // Something was recovered from each: both are marked read.
        #expect(harness.waitFor(maildir + "/cur/1700000100.M1P1.pad:2,S"), "\(harness.daemonLog)")
        #expect(harness.waitFor(maildir + "/cur/1700000101.M1P1.cut:2,S"), "\(harness.daemonLog)")
        #expect(harness.daemonLog.contains("attachment delivered damaged"))
    }

    @Test func aMessageFromWhichNothingCanBeRecoveredStaysInNew() throws {
        let (harness, maildir) = try Self.harness(catchAll: true)
        defer { harness.remove() }
        try harness.start()
        try Self.deliver("nothing-recoverable.eml", into: maildir, as: "1700000200.M1P1.none")
        try Self.deliver("single-character-tail.eml", into: maildir, as: "1700000201.M1P1.tail")
        // The one whose first part still decodes to something is read; its empty part is skipped.
        #expect(harness.waitFor(maildir + "/cur/1700000201.M1P1.tail:2,S"), "\(harness.daemonLog)")
        let sandbox = harness.sandbox(Self.catchAll, mailbox: "INBOX")
        #expect(FileManager.default.contents(atPath: sandbox + "/tail.bin") == Data("Hello world!".utf8))
        #expect(!FileManager.default.fileExists(atPath: sandbox + "/nothing.bin"))
        #expect(harness.waitUntil { harness.daemonLog.contains("nothing in it can be recovered") }, "\(harness.daemonLog)")
        #expect(FileManager.default.fileExists(atPath: maildir + "/new/1700000200.M1P1.none"))
        #expect(!FileManager.default.fileExists(atPath: sandbox + "/empty.pdf"))
        let client = try LineClient(path: harness.socket)
        defer { client.close() }
        try client.send(["type": "status", "id": "s"])
        let status = try #require(client.readMessage())
        let inboxes = try #require(status["inboxes"] as? [[String: Any]])
        #expect(inboxes.first { ($0["path"] as? String) == maildir }?["unreadableMessages"] as? Int == 1)
    }

    /// Attached messages of `attached-message.eml` to a handler claiming `types`: each an .eml
    /// typed com.apple.mail.email with the exact bytes of the message.
    func attachedMessagesArrive(claiming types: [String]) throws {
        let (harness, maildir) = try Self.harness(catchAll: false)
        defer { harness.remove() }
        let reader = "org.docroute.test.mailreader"
        try Self.manifest(reader, types: types).write(toFile: harness.handlers + "/mailreader.plist", atomically: true, encoding: .utf8)
        try harness.start()
        try Self.deliver("attached-message.eml", into: maildir, as: "1700000300.M1P1.fwd")
        #expect(harness.waitFor(maildir + "/cur/1700000300.M1P1.fwd:2,S"), "\(harness.daemonLog)")
        let python = try Self.pythonParts("attached-message.eml", harness)
        let sandbox = harness.sandbox(reader, mailbox: "INBOX")
        #expect(FileManager.default.contents(atPath: sandbox + "/Original report.eml") == python["2"]?.bytes, "\(harness.daemonLog)")
        #expect(FileManager.default.contents(atPath: sandbox + "/Re: lunch?.eml") == python["3"]?.bytes)
        #expect(FileManager.default.contents(atPath: sandbox + "/message.eml")
                == Data("From: Third <third@example.org>\r\nSubject: encoded\r\n\r\nbase64 message\r\n".utf8))
        // The PDF inside the forwarded message still goes to the PDF viewer.
        #expect(FileManager.default.contents(atPath: harness.sandbox("org.docroute.pdfviewer", mailbox: "INBOX") + "/report.pdf") == python["2.2"]?.bytes)

        let client = try LineClient(path: harness.socket)
        defer { client.close() }
        try client.send(["type": "subscribe", "id": "1", "bundleIdentifier": reader])
        #expect(client.readMessage()?["pending"] as? Int == 3)
        let events = try Self.readEvents(client, count: 3)
        #expect(events.map { $0["contentType"] as? String } == Array(repeating: "com.apple.mail.email", count: 3))
        #expect(Set(events.map { Self.annotation($0)["partPath"] as? String ?? "" }) == ["2", "3", "4"])
    }

    @Test func anAttachedMessageReachesAHandlerClaimingEmail() throws {
        try attachedMessagesArrive(claiming: ["com.apple.mail.email"])
    }

    @Test func anAttachedMessageReachesAHandlerClaimingPublicMessage() throws {
        try attachedMessagesArrive(claiming: ["public.message"])
    }

    @Test
    func anAttachedMessageReachesAHandlerClaimingPublicData() throws {
        try attachedMessagesArrive(claiming: ["public.data"])
    }

    // MARK: docroutectl mail inspect

    @Test func mailInspectShowsEachPartWithoutDeliveringAnything() throws {
        let handlers = DaemonHarness.repositoryRoot + "/config/handlers"
        let file = Self.defects + "cut-short.eml"
        let before = try Data(contentsOf: URL(fileURLWithPath: file))
        let table = try CtlProcess.run(["mail", "inspect", "--handlers", handlers, file])
        #expect(table.status == 0, "\(table.error)")
        let lines = table.output.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("PART") && $0.contains("DAMAGE") && $0.contains("HANDLER") })
        let photo = try #require(lines.first { $0.hasPrefix("2 ") }, "\(table.output)")
        #expect(photo.contains("photo.jpg") && photo.contains("image/jpeg") && photo.contains("public.jpeg"))
        #expect(photo.contains("370") && photo.contains("truncated-encoding,unterminated"))
        #expect(photo.contains("→ org.docroute.pdfviewer"))
        let notes = try #require(lines.first { $0.hasPrefix("1 ") })
        #expect(notes.contains("notes.txt") && notes.contains("→ org.docroute.textviewer"), "\(notes)")
        #expect(lines.last?.contains("marks the message read") == true)

        let json = try CtlProcess.run(["mail", "inspect", "--json", "--handlers", handlers, Self.defects + "attached-message.eml"])
        #expect(json.status == 0, "\(json.error)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        let parts = try #require(object["parts"] as? [[String: Any]])
        #expect(parts.map { $0["partPath"] as? String } == ["2", "2.2", "3", "4"])
        #expect(parts.map { $0["contentType"] as? String } == ["com.apple.mail.email", "com.adobe.pdf", "com.apple.mail.email", "com.apple.mail.email"])
        #expect(parts[1]["bundleIdentifier"] as? String == "org.docroute.pdfviewer")
        #expect(parts[0]["size"] as? Int == 381)
        #expect(parts[0]["damage"] as? [String] == [])
        #expect((object["envelope"] as? [String: Any])?["subject"] as? String == "Fwd: two messages")
        // Nothing was touched.
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == before)
    }

    @Test func mailInspectSaysWhenAFileIsNotAMailOrHasNothingToRecover() throws {
        let handlers = DaemonHarness.repositoryRoot + "/config/handlers"
        let notMail = try CtlProcess.run(["mail", "inspect", "--handlers", handlers, DaemonHarness.repositoryRoot + "/config/samples/1abc.pdb"])
        #expect(notMail.status == 1)
        #expect(notMail.error.contains("not a mail message"), "\(notMail.error)")
        #expect(notMail.error.contains("no-header"))
        let missing = try CtlProcess.run(["mail", "inspect", "--handlers", handlers, "/nonexistent/message.eml"])
        #expect(missing.status == 1)
        #expect(missing.error.contains("cannot be read"), "\(missing.error)")
        let nothing = try CtlProcess.run(["mail", "inspect", "--handlers", handlers, Self.defects + "nothing-recoverable.eml"])
        #expect(nothing.status == 0)
        #expect(nothing.output.contains("skipped: damaged and nothing decoded"))
        #expect(nothing.output.contains("leaves it in new/"))
    }
}
