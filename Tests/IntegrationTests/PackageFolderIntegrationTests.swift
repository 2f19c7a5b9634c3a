import DocRouteTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A folder dropped where a file is expected: a folder whose name gives a package type
/// (`LSTypeIsPackage`, or conforming to `com.apple.package`) is one document, delivered whole to the
/// handler that claims its type (or quarantined whole); any other folder is a mailbox.
@Suite(.serialized) struct PackageFolderIntegrationTests {
    static let editor = "org.docroute.test.rtfdeditor"
    static let image: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + (0...255).map { UInt8($0) } + [0, 0, 0xFF]

    /// A harness whose handlers include one claiming `com.apple.rtfd`.
    func makeHarness(extraConfig: String = "") throws -> DaemonHarness {
        let harness = try DaemonHarness(extraConfig: extraConfig)
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

    /// Levels of the deep package: short in `make test`, the 10,000 in `make chaos`.
    static var deepLevels: Int {
        Int(ProcessInfo.processInfo.environment["DOCROUTE_DEEP_PACKAGE_LEVELS"] ?? "") ?? 1_000
    }

    /// Builds `<root>/staging/<name>` with `levels` nested folders `a/a/…/a` and a file at the
    /// bottom, through descriptors (the path is longer than PATH_MAX).
    func buildDeepPackage(_ harness: DaemonHarness, _ name: String, levels: Int) throws -> String {
        let package = harness.root + "/staging/" + name
        try FileManager.default.createDirectory(atPath: package, withIntermediateDirectories: true)
        try Data("{\\rtf1 top}\n".utf8).write(to: URL(fileURLWithPath: package + "/TXT.rtf"))
        var folder = open(package, O_RDONLY | O_DIRECTORY)
        guard folder >= 0 else { throw HarnessError("open \(package): \(errno)") }
        for _ in 0..<levels {
            guard mkdirat(folder, "a", 0o755) == 0 else { throw HarnessError("mkdirat: \(errno)") }
            let child = openat(folder, "a", O_RDONLY | O_DIRECTORY)
            close(folder)
            guard child >= 0 else { throw HarnessError("openat: \(errno)") }
            folder = child
        }
        let file = openat(folder, "bottom.txt", O_WRONLY | O_CREAT, 0o644)
        _ = write(file, "bottom\n", 7)
        close(file)
        close(folder)
        return package
    }

    /// GNU rm walks with descriptors, so it removes trees deeper than PATH_MAX that
    /// FileManager cannot.
    func removeTree(_ path: String) {
        let rm = Process()
        rm.executableURL = URL(fileURLWithPath: "/bin/rm")
        rm.arguments = ["-rf", path]
        try? rm.run()
        rm.waitUntilExit()
    }

    /// A package deeper than `max_package_depth` (10,000 levels crashed the
    /// recursive copy, at every restart) is quarantined whole with the reason, and the daemon
    /// goes on delivering; a restart does not meet it again.
    @Test func aPackageDeeperThanTheLimitIsQuarantinedAndTheDaemonGoesOn() throws {
        let harness = try makeHarness()
        defer { removeTree(harness.root); harness.remove() }
        try harness.start()
        let package = try buildDeepPackage(harness, "Deep.rtfd", levels: Self.deepLevels)
        #expect(rename(package, harness.inbox + "/Deep.rtfd") == 0)
        let quarantined = harness.quarantine + "/Inbox/Deep.rtfd"
        #expect(harness.waitFor(quarantined + ".reason", timeout: 60), "\(harness.daemonLog.suffix(2000))")
        let reason = (try? String(contentsOfFile: quarantined + ".reason", encoding: .utf8)) ?? ""
        #expect(reason.contains("more than 256 levels deep (max_package_depth)"), "\(reason)")
        #expect(FileManager.default.fileExists(atPath: quarantined + "/TXT.rtf"), "quarantined whole")
        #expect(!FileManager.default.fileExists(atPath: harness.inbox + "/Deep.rtfd"))
        #expect(!FileManager.default.fileExists(atPath: harness.sandbox(Self.editor) + "/Deep.rtfd"))
        #expect(harness.process?.isRunning == true, "\(harness.daemonLog.suffix(2000))")
        // Still serving: a package within the limits and a file after it.
        let fine = try buildPackage(harness, "Fine.rtfd", text: "{\\rtf1 fine}\n")
        #expect(rename(fine, harness.inbox + "/Fine.rtfd") == 0)
        #expect(harness.waitFor(harness.sandbox(Self.editor) + "/Fine.rtfd/Pictures/inner/deep.txt"), "\(harness.daemonLog.suffix(2000))")
        harness.crash()
        try harness.start()
        try harness.drop("after.txt", Array("after\n".utf8))
        #expect(harness.waitFor(harness.sandbox("org.docroute.textviewer") + "/after.txt"))
        #expect(harness.process?.isRunning == true)
    }

    /// `max_package_entries` bounds what one package may hold.
    @Test func aPackageWithMoreEntriesThanTheLimitIsQuarantined() throws {
        let harness = try makeHarness(extraConfig: "max_package_entries = 40")
        defer { harness.remove() }
        try harness.start()
        let package = try buildPackage(harness, "Many.rtfd", text: "{\\rtf1 many}\n")
        for index in 0..<50 { try Data("\(index)\n".utf8).write(to: URL(fileURLWithPath: package + "/part\(index).txt")) }
        #expect(rename(package, harness.inbox + "/Many.rtfd") == 0)
        let quarantined = harness.quarantine + "/Inbox/Many.rtfd"
        #expect(harness.waitFor(quarantined + ".reason"), "\(harness.daemonLog.suffix(2000))")
        let reason = (try? String(contentsOfFile: quarantined + ".reason", encoding: .utf8)) ?? ""
        #expect(reason.contains("more than 40 files and folders (max_package_entries)"), "\(reason)")
    }

    /// An input that crashed the daemon is set aside at the next start, never
    /// touched again. The crash is real: SIGSEGV while the package is being copied.
    @Test func aPackageThatCrashedTheDaemonIsSetAsideAtTheNextStart() throws {
        let harness = try makeHarness()
        defer { harness.remove() }
        // No core file and no backtracer for the crash this test causes (swift-backtrace outlives a
        // daemon it was attached to, holding its descriptors).
        let quiet = ["SWIFT_BACKTRACE": "enable=no"]
        try harness.start(environment: quiet, shell: ["/bin/sh", "-c", "ulimit -c 0; exec \"$0\" \"$@\""])
        let package = try buildPackage(harness, "Heavy.rtfd", text: "{\\rtf1 heavy}\n")
        // Many files, each copied and synced: long enough to be caught in the middle.
        for index in 0..<1_500 { try Data(repeating: UInt8(index % 251), count: 2048).write(to: URL(fileURLWithPath: package + "/part\(index).bin")) }
        #expect(rename(package, harness.inbox + "/Heavy.rtfd") == 0)
        let sandbox = harness.sandbox(Self.editor)
        let copying = harness.waitUntil(timeout: 30) {
            ((try? FileManager.default.contentsOfDirectory(atPath: sandbox)) ?? []).contains { $0.hasPrefix(".docroute-tmp-") }
        }
        try #require(copying, "the copy never started: \(harness.daemonLog.suffix(2000))")
        harness.signal(SIGSEGV)
        // Polled rather than waited for (Foundation's Process may not notice a child that ended on a
        // signal): the daemon is gone once its state directory lock is free.
        let lock = open(harness.root + "/state/docrouted.lock", O_RDWR)
        defer { close(lock) }
        let ended = harness.waitUntil(timeout: 60) { flock(lock, LOCK_EX | LOCK_NB) == 0 }
        try #require(ended, "docrouted did not end on SIGSEGV: \(harness.daemonLog.suffix(1000))")
        flock(lock, LOCK_UN)
        var marker = stat()
        #expect(stat(harness.root + "/state/crash-marker", &marker) == 0 && marker.st_size == 1, "the crash was noted")
        try harness.start(environment: quiet)
        let quarantined = harness.quarantine + "/Inbox/Heavy.rtfd"
        #expect(harness.waitFor(quarantined + ".reason", timeout: 30), "\(harness.daemonLog.suffix(3000))")
        let reason = (try? String(contentsOfFile: quarantined + ".reason", encoding: .utf8)) ?? ""
        #expect(reason.contains("docrouted crashed while it had this package in hand"), "\(reason)")
        #expect(harness.daemonLog.contains("the last run of docrouted crashed (signal 11)"), "\(harness.daemonLog.suffix(3000))")
        #expect(!FileManager.default.fileExists(atPath: sandbox + "/Heavy.rtfd"), "never delivered after it crashed the daemon")
        let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: sandbox)) ?? []
        #expect(!leftovers.contains { $0.hasPrefix(".docroute") }, "recovery removed the half copy: \(leftovers)")
        // Moved back in by an administrator, it is tried again (and delivered).
        #expect(rename(quarantined, harness.inbox + "/Heavy.rtfd") == 0)
        #expect(harness.waitFor(sandbox + "/Heavy.rtfd/part1499.bin", timeout: 120), "\(harness.daemonLog.suffix(2000))")
    }
}
