import DocRouteTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What an operator does with what docrouted set aside: mail attachments nobody claims, listed as
/// parts of their message and delivered from it once a handler claims them; a quarantined file sent
/// to a handler of the operator's choice.
@Suite(.serialized) struct QuarantineReleaseIntegrationTests {
    static let anything = "org.example.anything"
    static let other = "org.example.other"
    static let pdfviewer = "org.docroute.pdfviewer"

    /// Two handlers that open any data: `anything` (Alternate, so the default) and `other` (None
    /// rank is never a candidate, so Alternate too, after it by name).
    static func installDataHandlers(_ harness: DaemonHarness) throws {
        try MaildirIntegrationTests.manifest(anything, types: ["public.data"]).write(toFile: harness.handlers + "/anything.plist", atomically: true, encoding: .utf8)
        try MaildirIntegrationTests.manifest(other, types: ["public.data"]).write(toFile: harness.handlers + "/other.plist", atomically: true, encoding: .utf8)
        let config = ["--config", harness.configPath]
        #expect(harness.waitUntil(timeout: 10) {
            let status = (try? CtlProcess.run(["status", "--json"] + config).output) ?? ""
            return status.contains(anything) && status.contains(other)
        }, "\(harness.daemonLog)")
    }

    /// A message with a PDF (part 3), an attachment nobody claims (part 2), and one more nobody
    /// claims inside a nested multipart (part 4.2).
    static let message = """
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
        Content-Disposition: attachment; filename="report.pdf"\r
        Content-Transfer-Encoding: base64\r
        \r
        JVBERi0xLjQKJcOkw7zDtsOfCg==\r
        --b\r
        Content-Type: multipart/mixed; boundary="c"\r
        \r
        --c\r
        Content-Type: text/plain\r
        \r
        inner\r
        --c\r
        Content-Type: application/x-other-thing\r
        Content-Disposition: attachment; filename="deep.qqq"\r
        Content-Transfer-Encoding: base64\r
        \r
        qqqqqqqqqqqq\r
        --c--\r
        --b--\r

        """

    static func json(_ text: String) -> [[String: Any]]? {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [[String: Any]]
    }

    @Test func unclaimedMailAttachmentsAreListedAsPartsOfTheirMessageAndReleasedFromIt() throws {
        let (harness, maildir) = try MaildirIntegrationTests.harness(catchAll: false)
        defer { harness.remove() }
        let name = "1700000001.M2P1.host"
        try FileManager.default.createDirectory(atPath: maildir + "/new", withIntermediateDirectories: true)
        try Data(Self.message.utf8).write(to: URL(fileURLWithPath: maildir + "/new/" + name))
        try harness.start()
        let config = ["--config", harness.configPath]

        // The PDF is delivered, the message is read as before (a mail client reads cur/ too)…
        #expect(harness.waitFor(maildir + "/cur/\(name):2,S"), "\(harness.daemonLog)")
        #expect(harness.waitFor(harness.sandbox(Self.pdfviewer, mailbox: "INBOX") + "/report.pdf"), "\(harness.daemonLog)")
        // …and the parts nobody claims are in the quarantine: entries naming the message, not copies.
        let second = harness.quarantine + "/INBOX/\(name)_part2.mailpart"
        let deep = harness.quarantine + "/INBOX/\(name)_part4.2.mailpart"
        #expect(harness.waitFor(second) && harness.waitFor(deep), "\(harness.daemonLog)")
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: harness.quarantine + "/INBOX")) ?? []
        #expect(Set(entries) == ["\(name)_part2.mailpart", "\(name)_part4.2.mailpart"], "\(entries)")
        let entryBytes = try Data(contentsOf: URL(fileURLWithPath: second))
        #expect(entryBytes.range(of: Data(base64Encoded: "AAECAwQFBgcICQ==")!) == nil, "the attachment's bytes are not copied")
        #expect(harness.daemonLog.contains("attachment quarantined"), "\(harness.daemonLog)")

        let listed = try CtlProcess.run(["quarantine", "list"] + config)
        #expect(listed.status == 0, "\(listed.error)")
        let row = listed.output.split(separator: "\n").first { $0.hasPrefix(second) }.map(String.init) ?? ""
        for field in ["<sheet@example.org>", " 2 ", "numbers.qqq", "application/x-unknown-thing", "no handler claims"] {
            #expect(row.contains(field), "\(field) missing: \(listed.output)")
        }
        #expect(listed.output.contains("2 mail attachments"), "\(listed.output)")
        let json = try CtlProcess.run(["quarantine", "list", "--json"] + config)
        let objects = try #require(Self.json(json.output), "\(json.output)")
        let part = try #require(objects.first { $0["path"] as? String == deep }, "\(json.output)")
        #expect(part["kind"] as? String == "mail-part")
        #expect(part["messageID"] as? String == "<sheet@example.org>")
        #expect(part["partPath"] as? String == "4.2")
        #expect(part["fileName"] as? String == "deep.qqq")
        #expect(part["mimeType"] as? String == "application/x-other-thing")
        #expect(part["mailbox"] as? String == "INBOX")
        #expect(part["message"] as? String == maildir + "/cur/\(name):2,S")
        #expect((part["reason"] as? String)?.hasPrefix("no handler claims") == true)

        // Nobody claims them yet: both stay, and the message is where it was.
        let early = try CtlProcess.run(["quarantine", "release", "--all"] + config)
        #expect(early.status == 1)
        #expect(early.error.contains("kept \(second)") && early.error.contains("still no handler claims"), "\(early.error)")
        #expect(FileManager.default.fileExists(atPath: second) && FileManager.default.fileExists(atPath: maildir + "/cur/\(name):2,S"))

        try Self.installDataHandlers(harness)
        // A mail client flags the message meanwhile: it is found by its unique name.
        #expect(rename(maildir + "/cur/\(name):2,S", maildir + "/cur/\(name):2,FS") == 0)

        // One part to a handler of the operator's choice (not a candidate first), the rest by --all.
        let refused = try CtlProcess.run(["quarantine", "release", "--to", Self.pdfviewer, second] + config)
        #expect(refused.status == 1)
        #expect(refused.error.contains("pick one of") && refused.error.contains(Self.anything) && refused.error.contains(Self.other), "\(refused.error)")
        let picked = try CtlProcess.run(["quarantine", "release", "--to", Self.other, second] + config)
        #expect(picked.status == 0, "\(picked.error)")
        #expect(picked.output.contains("part 2 (numbers.qqq) of <sheet@example.org> → \(Self.other)"), "\(picked.output)")
        let numbers = harness.sandbox(Self.other, mailbox: "INBOX") + "/numbers.qqq"
        #expect(harness.waitFor(numbers), "\(harness.daemonLog)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: numbers)) == Data(base64Encoded: "AAECAwQFBgcICQ=="))
        #expect(!FileManager.default.fileExists(atPath: second))

        let rest = try CtlProcess.run(["quarantine", "release", "--all"] + config)
        #expect(rest.status == 0, "\(rest.error)")
        #expect(rest.output.contains("part 4.2 (deep.qqq)") && rest.output.contains(Self.anything), "\(rest.output)")
        let deepCopy = harness.sandbox(Self.anything, mailbox: "INBOX") + "/deep.qqq"
        #expect(harness.waitFor(deepCopy), "\(harness.daemonLog)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: deepCopy)) == Data(base64Encoded: "qqqqqqqqqqqq"))
        // Nothing else of the message came again: the PDF once, each part once.
        #expect(MaildirIntegrationTests.delivered(harness, mailbox: "INBOX").count == 3)
        #expect(FileManager.default.fileExists(atPath: maildir + "/cur/\(name):2,FS"))
        let empty = try CtlProcess.run(["quarantine", "list"] + config)
        #expect(empty.output.hasPrefix("nothing in quarantine"), "\(empty.output)")

        // The same message delivered again (its Message-ID known): the ledger's parts keep anything
        // from coming twice, and no entry comes back.
        try Data(Self.message.utf8).write(to: URL(fileURLWithPath: maildir + "/new/1700000002.M3P1.host"))
        #expect(harness.waitFor(maildir + "/cur/1700000002.M3P1.host:2,S"), "\(harness.daemonLog)")
        #expect(MaildirIntegrationTests.delivered(harness, mailbox: "INBOX").count == 3)
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: harness.quarantine + "/INBOX")) ?? []).isEmpty)
    }

    @Test func aQuarantinedFileGoesToTheHandlerPickedAmongItsCandidates() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        let config = ["--config", harness.configPath]
        let bytes: [UInt8] = [0x00, 0x9F, 0x92, 0x96, 0xFF, 0x00, 0x01, 0x02] + Array(repeating: 0xEE, count: 56)
        try harness.drop("blob.qqq", bytes, mailbox: "Work")
        let blob = harness.quarantine + "/Work/blob.qqq"
        #expect(harness.waitFor(blob + ".reason"), "\(harness.daemonLog)")
        try Self.installDataHandlers(harness)

        let refused = try CtlProcess.run(["quarantine", "release", "--to", Self.pdfviewer, blob] + config)
        #expect(refused.status == 1)
        #expect(refused.error.contains("kept \(blob)"), "\(refused.error)")
        #expect(refused.error.contains("pick one of: \(Self.anything), \(Self.other)"), "\(refused.error)")
        #expect(FileManager.default.fileExists(atPath: blob) && FileManager.default.fileExists(atPath: blob + ".reason"))

        let tooMany = try CtlProcess.run(["quarantine", "release", "--to", Self.other, "--all"] + config)
        #expect(tooMany.status != 0 && tooMany.error.contains("--to sends one file"), "\(tooMany.error)")

        // Not the default (anything): the one picked.
        let picked = try CtlProcess.run(["quarantine", "release", "--to", Self.other, blob] + config)
        #expect(picked.status == 0, "\(picked.error)")
        #expect(picked.output.contains("released \(blob) → \(Self.other) (delivery "), "\(picked.output)")
        let copy = harness.sandbox(Self.other, mailbox: "Work") + "/blob.qqq"
        #expect(harness.waitFor(copy), "\(harness.daemonLog)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: copy)) == Data(bytes))
        #expect(!FileManager.default.fileExists(atPath: harness.sandbox(Self.anything, mailbox: "Work") + "/blob.qqq"))
        #expect(!FileManager.default.fileExists(atPath: blob) && !FileManager.default.fileExists(atPath: blob + ".reason"))
    }
}
