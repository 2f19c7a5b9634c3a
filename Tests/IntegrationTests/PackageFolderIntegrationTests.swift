import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A folder dropped where a file is expected (issue #4): a folder whose name gives a package type
/// (`LSTypeIsPackage`, or conforming to `com.apple.package`) is one document, delivered whole to the
/// handler that claims its type (or quarantined whole); any other folder is a mailbox.
@Suite(.serialized) struct PackageFolderIntegrationTests {
    static let editor = "org.docroute.test.rtfdeditor"
    static let image: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + (0...255).map { UInt8($0) } + [0, 0, 0xFF]

    /// A harness whose handlers include one claiming `com.apple.rtfd`.
    func makeHarness() throws -> DaemonHarness {
        let harness = try DaemonHarness()
        try """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
            \t<key>CFBundleIdentifier</key><string>\(Self.editor)</string>
            \t<key>CFBundleName</key><string>RTFD Editor</string>
            \t<key>CFBundleDocumentTypes</key>
            \t<array><dict>
            \t\t<key>CFBundleTypeName</key><string>Rich text with attachments</string>
            \t\t<key>CFBundleTypeRole</key><string>Editor</string>
            \t\t<key>LSItemContentTypes</key><array><string>com.apple.rtfd</string></array>
            \t</dict></array>
            \t<key>DocRouteUser</key><string>root</string>
            </dict>
            </plist>
            """.write(toFile: harness.handlers + "/rtfdeditor.plist", atomically: true, encoding: .utf8)
        return harness
    }

    /// Builds `name` under `<root>/staging` (TXT.rtf, an image, a nested folder) and returns its path.
    func buildPackage(_ harness: DaemonHarness, _ name: String, text: String) throws -> String {
        let package = harness.root + "/staging/" + name
        try FileManager.default.createDirectory(atPath: package + "/Pictures/inner", withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: package + "/TXT.rtf"))
        try Data(Self.image).write(to: URL(fileURLWithPath: package + "/image.png"))
        try Data("deep inside\n".utf8).write(to: URL(fileURLWithPath: package + "/Pictures/inner/deep.txt"))
        return package
    }

    /// Every path below `root` with its bytes (nil for a folder), by relative path.
    func tree(_ root: String) -> [String: Data?] {
        var result: [String: Data?] = [:]
        for path in (try? FileManager.default.subpathsOfDirectory(atPath: root)) ?? [] {
            var info = stat()
            guard lstat(root + "/" + path, &info) == 0 else { continue }
            result[path] = (info.st_mode & S_IFMT) == S_IFDIR ? .some(nil) : FileManager.default.contents(atPath: root + "/" + path)
        }
        return result
    }

    @Test func aPackageRenamedIntoTheInboxArrivesWholeAndAPlainFolderIsAMailbox() throws {
        let harness = try makeHarness()
        defer { harness.remove() }
        try harness.start()
        let first = try buildPackage(harness, "Report.rtfd", text: "{\\rtf1 first}\n")
        let expected = tree(first)
        #expect(expected.count == 5, "\(expected.keys.sorted())")
        try FileManager.default.createDirectory(atPath: harness.root + "/staging/Plain", withIntermediateDirectories: true)
        try Data("inside a mailbox\n".utf8).write(to: URL(fileURLWithPath: harness.root + "/staging/Plain/note.txt"))
        #expect(rename(first, harness.inbox + "/Report.rtfd") == 0)
        #expect(rename(harness.root + "/staging/Plain", harness.inbox + "/Plain") == 0)

        let delivered = harness.sandbox(Self.editor) + "/Report.rtfd"
        #expect(harness.waitUntil { !FileManager.default.fileExists(atPath: harness.inbox + "/Report.rtfd") }, "\(harness.daemonLog.suffix(2000))")
        #expect(tree(delivered) == expected, "byte for byte: \(tree(delivered).keys.sorted())")
        #expect(harness.waitFor(harness.sandbox("org.docroute.textviewer", mailbox: "Plain") + "/note.txt"), "a plain folder is a mailbox")
        let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: harness.sandbox(Self.editor))) ?? []
        #expect(!leftovers.contains { $0.hasPrefix(".docroute") }, "no temporary left: \(leftovers)")

        // The same name again: the name rule of files gives Report-1.rtfd.
        let second = try buildPackage(harness, "Report.rtfd", text: "{\\rtf1 second}\n")
        #expect(rename(second, harness.inbox + "/Report.rtfd") == 0)
        #expect(harness.waitFor(harness.sandbox(Self.editor) + "/Report-1.rtfd/TXT.rtf"), "\(harness.daemonLog.suffix(2000))")
        #expect(harness.waitUntil { !FileManager.default.fileExists(atPath: harness.inbox + "/Report.rtfd") })
        #expect(FileManager.default.contents(atPath: harness.sandbox(Self.editor) + "/Report-1.rtfd/TXT.rtf") == Data("{\\rtf1 second}\n".utf8))
        #expect(FileManager.default.contents(atPath: delivered + "/TXT.rtf") == Data("{\\rtf1 first}\n".utf8), "the first is untouched")

        // The handler is told like for any delivery: a file URL of the folder.
        let client = try LineClient(path: harness.socket)
        defer { client.close() }
        try client.send(["type": "subscribe", "id": "1", "bundleIdentifier": Self.editor])
        _ = client.readMessage()
        let launch = client.readMessage()
        let url = (launch?["launchOptions"] as? [String: Any])?["UIApplicationLaunchOptionsURLKey"] as? String
        #expect(url == "file://" + delivered, "\(String(describing: launch))")
        let containers = (try? FileManager.default.subpathsOfDirectory(atPath: harness.containers)) ?? []
        #expect(!containers.contains { $0.hasPrefix("org.docroute.textviewer") && $0.hasSuffix("TXT.rtf") }, "never broken up: \(containers)")

        // Packages count in the operator's view like files.
        try client.send(["type": "status", "id": "2"])
        var status: [String: Any]?
        while let message = client.readMessage() {
            if message["type"] as? String == "status" { status = message; break }
        }
        let handlers = status?["handlers"] as? [[String: Any]] ?? []
        let editor = handlers.first { $0["bundleIdentifier"] as? String == Self.editor }
        #expect(editor?["deliveredToday"] as? Int == 2, "\(String(describing: editor))")
        #expect(status?["deliveredSinceStart"] as? Int == 3, "two packages and the note: \(String(describing: status))")
    }

    /// Packages renamed into the inbox while the daemon is killed at random moments: each
    /// arrives whole exactly once, no temporary folder is left, the inbox is emptied.
    @Test func packagesSurviveKillsAtRandomMoments() throws {
        let harness = try makeHarness()
        defer { harness.remove() }
        try harness.start()
        let count = 24
        let restarts = 3
        var built: [(name: String, path: String)] = []
        var expected: [String: [String: Data?]] = [:]
        for index in 0..<count {
            let name = "Report\(index).rtfd"
            let path = try buildPackage(harness, name, text: "{\\rtf1 report \(index)}\n")
            expected[name] = tree(path)
            built.append((name, path))
        }
        var next = 0
        for round in 0..<restarts {
            let share = (count - next) / (restarts - round)
            for (name, path) in built[next..<(next + share)] { #expect(rename(path, harness.inbox + "/" + name) == 0) }
            next += share
            usleep(useconds_t.random(in: 1_000...150_000))
            harness.crash()
            try harness.start()
        }
        for (name, path) in built[next...] { #expect(rename(path, harness.inbox + "/" + name) == 0) }

        let sandbox = harness.sandbox(Self.editor)
        let arrived = harness.waitUntil(timeout: 120) {
            Set((try? FileManager.default.contentsOfDirectory(atPath: sandbox)) ?? []).isSuperset(of: expected.keys)
        }
        #expect(arrived, "\(harness.daemonLog.suffix(3000))")
        #expect(harness.waitForInboxDrained(timeout: 30), "every source tree removed once its copy is committed")
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: sandbox)) ?? []
        #expect(Set(entries) == Set(expected.keys), "each package exactly once, no temporary left: \(Set(entries).subtracting(expected.keys).sorted())")
        for (name, files) in expected {
            #expect(tree(sandbox + "/" + name) == files, "\(name) whole, byte for byte")
        }
    }

    @Test func aPackageNobodyClaimsIsQuarantinedWhole() throws {
        let harness = try makeHarness()
        defer { harness.remove() }
        try harness.start()
        // com.apple.applescript.script-bundle: a package type no handler claims.
        let package = try buildPackage(harness, "Holiday.scptd", text: "script\n")
        let expected = tree(package)
        #expect(rename(package, harness.inbox + "/Holiday.scptd") == 0)
        let quarantined = harness.quarantine + "/Inbox/Holiday.scptd"
        #expect(harness.waitFor(quarantined + ".reason"), "\(harness.daemonLog.suffix(2000))")
        #expect(tree(quarantined) == expected, "whole: \(tree(quarantined).keys.sorted())")
        let reason = (try? String(contentsOfFile: quarantined + ".reason", encoding: .utf8)) ?? ""
        #expect(reason.contains("com.apple.applescript.script-bundle"), "\(reason)")
        #expect(!FileManager.default.fileExists(atPath: harness.inbox + "/Holiday.scptd"))
    }

    @Test func aLinkInsideAPackageIsNeverFollowed() throws {
        let harness = try makeHarness()
        defer { harness.remove() }
        try harness.start()
        let package = try buildPackage(harness, "Report.rtfd", text: "{\\rtf1 linked}\n")
        let expected = tree(package)
        #expect(symlink("/etc/shadow", package + "/shadow") == 0)
        #expect(symlink("/etc", package + "/Pictures/etc") == 0)
        #expect(mkfifo(package + "/pipe", 0o600) == 0)
        #expect(rename(package, harness.inbox + "/Report.rtfd") == 0)
        let delivered = harness.sandbox(Self.editor) + "/Report.rtfd"
        #expect(harness.waitUntil { !FileManager.default.fileExists(atPath: harness.inbox + "/Report.rtfd") }, "\(harness.daemonLog.suffix(2000))")
        #expect(tree(delivered) == expected, "delivered without the link, the FIFO: \(tree(delivered).keys.sorted())")
        #expect(harness.daemonLog.contains("package-entry-skipped"))
    }

    @Test func aPackageCreatedInPlaceWaitsForAScan() throws {
        let harness = try makeHarness()
        defer { harness.remove() }
        // Present before the daemon starts: the start scan takes it.
        let package = try buildPackage(harness, "Early.rtfd", text: "{\\rtf1 early}\n")
        #expect(rename(package, harness.inbox + "/Early.rtfd") == 0)
        try harness.start()
        #expect(harness.waitFor(harness.sandbox(Self.editor) + "/Early.rtfd/Pictures/inner/deep.txt"), "\(harness.daemonLog.suffix(2000))")
        // Made in place (mkdir in the inbox): possibly still filling, so not taken on its creation.
        #expect(mkdir(harness.inbox + "/Filling.rtfd", 0o755) == 0)
        try Data("{\\rtf1 partial}\n".utf8).write(to: URL(fileURLWithPath: harness.inbox + "/Filling.rtfd/TXT.rtf"))
        try harness.drop("after.txt", Array("after\n".utf8))
        #expect(harness.waitFor(harness.sandbox("org.docroute.textviewer") + "/after.txt"))
        #expect(FileManager.default.fileExists(atPath: harness.inbox + "/Filling.rtfd/TXT.rtf"))
        #expect(!FileManager.default.fileExists(atPath: harness.sandbox(Self.editor) + "/Filling.rtfd"))
    }
}
