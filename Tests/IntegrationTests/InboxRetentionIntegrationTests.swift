import DocRouteTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `DocRouteInboxRetentionDays`: docrouted removes the copies a handler acknowledged longer ago
/// than that from its `Documents/Inbox/<mailbox>/`, and nothing else.
@Suite(.serialized) struct InboxRetentionIntegrationTests {
    static let textviewer = "org.docroute.textviewer"
    /// 4.3 s: short enough for a test, long enough to see a copy kept until then.
    static let retentionDays = 0.00005

    /// The textviewer sample with a retention, as an author writes it.
    static func addRetention(to harness: DaemonHarness) throws {
        let path = harness.handlers + "/textviewer.plist"
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let dict = try #require(text.range(of: "<dict>"))
        var edited = text
        edited.insert(contentsOf: "\n\t<key>DocRouteInboxRetentionDays</key>\n\t<real>\(Self.retentionDays)</real>", at: dict.upperBound)
        try edited.write(toFile: path, atomically: true, encoding: .utf8)
    }

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    @Test func acknowledgedCopiesAreRemovedAfterTheirRetentionAndNothingElse() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try Self.addRetention(to: harness)
        try harness.start()
        let inbox = harness.sandbox(Self.textviewer)
        let other = harness.sandbox(Self.textviewer, mailbox: "Other")
        for name in ["a.txt", "b.txt", "c.txt", "d.txt"] {
            try harness.drop(name, Array("\(name) as delivered\n".utf8))
            #expect(harness.waitFor(inbox + "/" + name), "\(harness.daemonLog)")
        }
        try harness.drop("e.txt", Array("e.txt as delivered\n".utf8), mailbox: "Other")
        #expect(harness.waitFor(other + "/e.txt"))
        #expect(harness.waitForInboxDrained())

        // The handler: a, b and e acknowledged, d declined, c never answered.
        let client = try LineClient(path: harness.socket)
        defer { client.close() }
        try client.send(["type": "subscribe", "id": "1", "bundleIdentifier": Self.textviewer])
        #expect(client.readMessage()?["pending"] as? Int == 5)
        var deliveries: [String: String] = [:]
        for _ in 0..<5 {
            let event = try #require(client.readMessage())
            let url = (event["url"] as? String) ?? ((event["launchOptions"] as? [String: Any])?["UIApplicationLaunchOptionsURLKey"] as? String)
            let name = try #require(url.flatMap { URL(string: $0)?.lastPathComponent }, "\(event)")
            deliveries[name] = event["deliveryID"] as? String
        }
        for (name, handled) in [("a.txt", true), ("b.txt", true), ("e.txt", true), ("d.txt", false)] {
            try client.send(["type": "ack", "deliveryID": try #require(deliveries[name], "\(deliveries)"), "handled": handled])
        }
        // What the sweep must leave: b replaced by the handler's own file of that name, a file the
        // ledger never delivered, and e behind a symbolic link the handler put in place of its folder.
        try Data("the handler's own b.txt\n".utf8).write(to: URL(fileURLWithPath: inbox + "/.b.new"))
        #expect(rename(inbox + "/.b.new", inbox + "/b.txt") == 0)
        try Data("never delivered\n".utf8).write(to: URL(fileURLWithPath: inbox + "/x.txt"))
        let outside = harness.root + "/outside"
        #expect(rename(other, outside) == 0)
        #expect(symlink(outside, other) == 0)

        // Kept while younger than its retention.
        usleep(1_000_000)
        #expect(Self.exists(inbox + "/a.txt"), "removed before its retention:\n\(harness.daemonLog.suffix(2000))")

        #expect(harness.waitUntil(timeout: 20) { !Self.exists(inbox + "/a.txt") }, "a.txt kept past its retention:\n\(harness.daemonLog.suffix(3000))")
        // Two more sweeps, for anything wrongly taken to go too.
        usleep(3_000_000)
        #expect(try String(contentsOfFile: inbox + "/b.txt", encoding: .utf8) == "the handler's own b.txt\n")
        for kept in [inbox + "/c.txt", inbox + "/d.txt", inbox + "/x.txt", outside + "/e.txt"] {
            #expect(Self.exists(kept), "\(kept) removed:\n\(harness.daemonLog.suffix(3000))")
        }
        let log = harness.daemonLog
        #expect(log.contains("removed an acknowledged copy past its retention") && log.contains("path=\(inbox)/a.txt"), "\(log.suffix(3000))")
        #expect(log.components(separatedBy: "removed an acknowledged copy past its retention").count - 1 == 1, "\(log.suffix(3000))")
        #expect(log.contains("removed 1 acknowledged copies"), "\(log.suffix(3000))")
    }
}
