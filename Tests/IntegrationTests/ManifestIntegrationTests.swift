import DocRouteTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Real-app-shaped manifests (Tests/DocRouteHandlersTests/Fixtures) through the built docroutectl
/// and docrouted: what `route` and `handlers` print, what the daemon logs and where it delivers.
@Suite struct ManifestIntegrationTests {
    static let fixtures = Fixtures.manifestsFolder
    /// A small but real torrent: a bencoded dictionary, as shared-mime-info's magic knows it.
    static let torrent = Array("d8:announce35:udp://tracker.example.org:1337/announce4:infod6:lengthi4e4:name5:a.txt12:piece lengthi16384e6:pieces20:aaaaaaaaaaaaaaaaaaaaee".utf8)

    /// A handlers directory holding these fixtures, and a state directory with no defaults.
    func directories(_ names: [String]) throws -> (handlers: String, state: String, remove: () -> Void) {
        let temporary = try TemporaryFolder("manifests")
        let root = temporary.string
        let handlers = root + "/handlers.d"
        try FileManager.default.createDirectory(atPath: handlers, withIntermediateDirectories: true)
        for name in names {
            try FileManager.default.copyItem(atPath: Self.fixtures + "/" + name + ".plist", toPath: handlers + "/" + name + ".plist")
        }
        return (handlers, root + "/state", { temporary.remove() })
    }

    static func json(_ text: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
    }

    @Test func routeSendsATorrentToATorrentAppAndSaysWhy() throws {
        let (handlers, state, remove) = try directories(["Transmission", "qBittorrent", "HexFiend"])
        defer { remove() }
        let file = handlers + "/../ubuntu.torrent"
        try Data(Self.torrent).write(to: URL(fileURLWithPath: file))

        let text = try CtlProcess.run(["route", "--handlers", handlers, "--state-directory", state, file])
        #expect(text.status == 0, "\(text.error)")
        let lines = text.output.split(separator: "\n").map(String.init)
        #expect(lines.first == "\(file): org.bittorrent.torrent", "\(text.output)")
        #expect(lines.contains("→ org.m0k.transmission"), "\(text.output)")
        #expect(lines.contains { $0.contains("ahead of org.qbittorrent.qBittorrent because rank Owner beats Default") }, "\(text.output)")
        #expect(lines.contains("  1. org.m0k.transmission via org.bittorrent.torrent (Owner, Viewer)"), "\(text.output)")
        #expect(lines.contains("  2. org.qbittorrent.qBittorrent via org.bittorrent.torrent (Default, Viewer)"), "\(text.output)")
        // The hex editor claims public.data, so it is in the Open In… list, after both torrent apps.
        #expect(lines.contains { $0.hasPrefix("  3. com.ridiculousfish.HexFiend via public.data") }, "the hex editor comes last: \(text.output)")
        #expect(lines.contains { $0.hasPrefix("  warning ") && $0.contains("Transmission.plist: UTExportedTypeDeclarations[0].UTTypeConformsTo[0]: ") },
                "the warnings of the candidates' manifests are shown: \(text.output)")

        // A name alone (no such file in that folder) routes the same: what would happen if it arrived.
        let json = try CtlProcess.run(["route", "--json", "--handlers", handlers, "--state-directory", state, handlers + "/../not-there.torrent"])
        #expect(json.status == 0, "\(json.error)")
        let report = try #require(Self.json(json.output), "\(json.output)")
        #expect(report["contentType"] as? String == "org.bittorrent.torrent")
        #expect(report["bundleIdentifier"] as? String == "org.m0k.transmission")
        let candidates = report["candidates"] as? [[String: Any]] ?? []
        #expect(candidates.compactMap { $0["bundleIdentifier"] as? String } == ["org.m0k.transmission", "org.qbittorrent.qBittorrent", "com.ridiculousfish.HexFiend"])
        let warnings = report["warnings"] as? [[String: Any]] ?? []
        #expect(warnings.contains { $0["code"] as? String == "unknown-parent" && $0["keyPath"] as? String == "UTExportedTypeDeclarations[0].UTTypeConformsTo[0]" },
                "\(warnings)")
        #expect((report["failedManifests"] as? [Any])?.isEmpty == true)
    }

    @Test func routeGivesHTMLToTheEditorNotToTheRefusedExporter() throws {
        let (handlers, state, remove) = try directories(["WebWeaver", "HTMLPad", "Firefox"])
        defer { remove() }
        let result = try CtlProcess.run(["route", "--handlers", handlers, "--state-directory", state, handlers + "/../index.html"])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.contains("→ net.htmlpad.HTMLPad"), "\(result.output)")
        #expect(result.output.contains("because role Editor beats Viewer"), "\(result.output)")
        #expect(result.output.contains("  3. org.webweaver.WebWeaver via public.html (Default, Viewer)"), "\(result.output)")
        #expect(result.output.contains("WebWeaver.plist: UTExportedTypeDeclarations[0]: org.webweaver.WebWeaver exports 'public.html', a system type"),
                "the refused export is shown as a warning: \(result.output)")
    }

    @Test func handlersShowsWarningsAndExitsZeroUnlessAManifestFailed() throws {
        let (handlers, state, remove) = try directories(["MacDown", "QLMarkdown"])
        defer { remove() }
        let text = try CtlProcess.run(["handlers", "--handlers", handlers, "--state-directory", state])
        #expect(text.status == 0, "warnings only: \(text.output) \(text.error)")
        let lines = text.output.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("  warning CFBundleDocumentTypes[1].CFBundleTypeRole: role 'QLGenerator' is not one Launch Services opens documents with") },
                "\(text.output)")
        #expect(lines.contains { $0.hasPrefix("  warning CFBundleDocumentTypes[4].LSHandlerRank: rank 'Primary'") }, "\(text.output)")
        #expect(lines.contains { $0.hasPrefix("com.example.qlmarkdown (QLMarkdown)") }, "the generator loads: \(text.output)")
        #expect(lines.last == "2 loaded, 7 warnings, 0 failed", "\(text.output)")

        let json = try CtlProcess.run(["handlers", "--json", "--handlers", handlers, "--state-directory", state])
        #expect(json.status == 0)
        let report = try #require(Self.json(json.output), "\(json.output)")
        let warnings = report["warnings"] as? [[String: Any]] ?? []
        #expect(warnings.count == 7)
        // The Quick Look generator's only claims are skipped: it loads, and is never sent anything.
        #expect(warnings.contains { $0["file"] as? String == handlers + "/QLMarkdown.plist" && $0["code"] as? String == "claims-nothing" }, "\(warnings)")
        #expect(warnings.first?["file"] as? String == handlers + "/MacDown.plist")
        #expect(warnings.first?["keyPath"] as? String == "CFBundleDocumentTypes[1].CFBundleTypeRole")
        #expect(warnings.first?["code"] as? String == "unknown-role")
        let macdown = (report["handlers"] as? [[String: Any]] ?? []).first { $0["bundleIdentifier"] as? String == "com.uranusjr.macdown" }
        #expect((macdown?["warnings"] as? [Any])?.count == 5, "\(macdown ?? [:])")

        // One manifest that cannot be used at all: exit 1, and it says what the variable is.
        try FileManager.default.copyItem(atPath: Self.fixtures + "/Template.plist", toPath: handlers + "/Template.plist")
        let failed = try CtlProcess.run(["handlers", "--handlers", handlers, "--state-directory", state])
        #expect(failed.status == 1)
        #expect(failed.output.contains("FAILED  \(handlers)/Template.plist: CFBundleIdentifier: '$(PRODUCT_BUNDLE_IDENTIFIER)' holds the Xcode build variable"),
                "\(failed.output)")
        #expect(failed.output.split(separator: "\n").last == "2 loaded, 7 warnings, 1 failed", "\(failed.output)")
    }

    @Test func theDaemonLogsWarningsAtReloadAndDeliversATorrentToTransmission() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        for name in ["Transmission", "HexFiend"] {
            try FileManager.default.copyItem(atPath: Self.fixtures + "/" + name + ".plist", toPath: harness.handlers + "/" + name + ".plist")
        }
        try harness.start()
        try harness.drop("ubuntu.torrent", Self.torrent)
        #expect(harness.waitFor(harness.sandbox("org.m0k.transmission") + "/ubuntu.torrent"), "\(harness.daemonLog.suffix(2000))")
        #expect(harness.daemonLog.contains("UTExportedTypeDeclarations[0].UTTypeConformsTo[0]"), "logged at start: \(harness.daemonLog.suffix(2000))")

        try FileManager.default.copyItem(atPath: Self.fixtures + "/QLMarkdown.plist", toPath: harness.handlers + "/.QLMarkdown.tmp")
        rename(harness.handlers + "/.QLMarkdown.tmp", harness.handlers + "/QLMarkdown.plist")
        harness.signal(SIGHUP)
        #expect(harness.waitUntil { harness.daemonLog.contains("CFBundleDocumentTypes[0].CFBundleTypeRole") },
                "logged at reload: \(harness.daemonLog.suffix(2000))")
        let line = harness.daemonLog.split(separator: "\n").first { $0.contains("CFBundleDocumentTypes[0].CFBundleTypeRole") }.map(String.init) ?? ""
        #expect(line.contains("warning") && line.contains("QLMarkdown.plist") && line.contains("'QLGenerator'"), "\(line)")
    }
}
