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
}
