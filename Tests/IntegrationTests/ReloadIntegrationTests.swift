import DocRouteTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The registry follows the handlers directory: added, changed and removed manifests take effect
/// without a restart, and SIGHUP reloads too.
@Suite(.serialized) struct ReloadIntegrationTests {
    static let viewer = """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0"><dict>
        <key>CFBundleIdentifier</key><string>com.example.movies</string>
        <key>CFBundleDocumentTypes</key><array><dict>
        <key>CFBundleTypeRole</key><string>Viewer</string>
        <key>LSItemContentTypes</key><array><string>com.apple.quicktime-movie</string></array>
        </dict></array></dict></plist>
        """

    func handlers(_ harness: DaemonHarness) throws -> [String] {
        let client = try LineClient(path: harness.socket)
        defer { client.close() }
        try client.send(["type": "status", "id": "s"])
        let status = try #require(client.readMessage())
        return (status["handlers"] as? [[String: Any]] ?? []).compactMap { $0["bundleIdentifier"] as? String }
    }

    @Test func manifestsAddedAndRemovedTakeEffectWithoutARestart() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        #expect(try !handlers(harness).contains("com.example.movies"))
        // Written under another name, then renamed into place, as editors and packages do.
        try Self.viewer.write(toFile: harness.handlers + "/.movies.tmp", atomically: false, encoding: .utf8)
        rename(harness.handlers + "/.movies.tmp", harness.handlers + "/movies.plist")
        #expect(harness.waitUntil { (try? handlers(harness).contains("com.example.movies")) == true }, "\(harness.daemonLog.suffix(1500))")
        try harness.drop("clip.mov", [0, 0, 0, 0x14, 0x66, 0x74, 0x79, 0x70, 0x71, 0x74])
        #expect(harness.waitFor(harness.sandbox("com.example.movies") + "/clip.mov"))
        unlink(harness.handlers + "/movies.plist")
        #expect(harness.waitUntil { (try? handlers(harness).contains("com.example.movies")) == false })
    }

    @Test func sighupReloads() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        unlink(harness.handlers + "/todolist.plist")
        harness.signal(SIGHUP)
        #expect(harness.waitUntil { (try? handlers(harness).contains("com.acme.todolist")) == false })
        #expect(try handlers(harness).contains("com.sunsetlakesoftware.molecules"), "the others stay")
    }

    func status(_ harness: DaemonHarness) throws -> [String: Any] {
        let client = try LineClient(path: harness.socket)
        defer { client.close() }
        try client.send(["type": "status", "id": "s"])
        return try #require(client.readMessage())
    }

    /// SIGHUP reads docroute.toml again: an inbox added is watched and scanned (a file already in
    /// it is delivered), one removed is no longer watched (a file dropped there stays), and a key
    /// a reload cannot take is named in the log, in `status` and by `docrouted --check`.
    @Test func sighupTakesNewInboxesAndNamesWhatNeedsARestart() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        let second = harness.root + "/second"
        mkdir(second, 0o755)
        // Waiting there before the reload: the scan of the new inbox finds it.
        try Data(DeliveryIntegrationTests.pdb).write(to: URL(fileURLWithPath: second + "/early.pdb"))
        let original = try String(contentsOfFile: harness.configPath, encoding: .utf8)
        let edited = original
            .replacingOccurrences(of: "path = \"\(harness.inbox)\"", with: "path = \"\(second)\"")
            .replacingOccurrences(of: "quarantine_directory = ", with: "max_connections = 100\nquarantine_directory = ")
        #expect(edited != original)
        try edited.write(toFile: harness.configPath, atomically: true, encoding: .utf8)
        harness.signal(SIGHUP)
        #expect(harness.waitFor(harness.sandbox(DeliveryIntegrationTests.molecules) + "/early.pdb"), "\(harness.daemonLog.suffix(2000))")
        // The inbox the file no longer names is not served: a file there stays.
        _ = try harness.drop("left.pdb", DeliveryIntegrationTests.pdb)
        try Data(DeliveryIntegrationTests.pdb).write(to: URL(fileURLWithPath: second + "/later.pdb"))
        #expect(harness.waitFor(harness.sandbox(DeliveryIntegrationTests.molecules) + "/later.pdb"), "\(harness.daemonLog.suffix(2000))")
        #expect(FileManager.default.fileExists(atPath: harness.inbox + "/left.pdb"), "the removed inbox is not served")
        #expect(!FileManager.default.fileExists(atPath: harness.sandbox(DeliveryIntegrationTests.molecules) + "/left.pdb"))
        let report = try status(harness)
        let inboxes = (report["inboxes"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
        #expect(inboxes == [second], "\(inboxes)")
        #expect(report["needsRestart"] as? [String] == ["max_connections"], "\(report)")
        #expect(harness.daemonLog.contains("message-id=needs-restart"), "\(harness.daemonLog.suffix(2000))")
        // What --check says beside the running daemon.
        let text = try harness.check().output
        #expect(text.contains("max_connections changed: that needs a restart"), "\(text)")
    }

    /// A configuration file that no longer reads is not taken at SIGHUP: the daemon goes on as it
    /// was and says why.
    @Test func aBrokenConfigurationIsNotTakenAtSIGHUP() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        try "socket = \"unterminated\n".write(toFile: harness.configPath, atomically: true, encoding: .utf8)
        harness.signal(SIGHUP)
        #expect(harness.waitUntil { harness.daemonLog.contains("message-id=configuration-not-reloaded") }, "\(harness.daemonLog.suffix(2000))")
        _ = try harness.drop("still.pdb", DeliveryIntegrationTests.pdb)
        #expect(harness.waitFor(harness.sandbox(DeliveryIntegrationTests.molecules) + "/still.pdb"), "still served: \(harness.daemonLog.suffix(2000))")
    }
}
