import DocRouteTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `docroutectl quarantine release` of a file whose inbox is on another file system than the
/// quarantine: the file is copied under a dot name, synced, renamed into place, and only then
/// removed from the quarantine. docrouted need not run; docroutectl moves the file itself.
@Suite struct QuarantineReleaseAcrossFileSystemsTests {
    /// A tmpfs beside the temporary folder's file system, for the inbox.
    static let otherFileSystem = "/dev/shm"

    static func onAnotherFileSystem() -> Bool {
        var here = stat(), there = stat()
        return stat(NSTemporaryDirectory(), &here) == 0 && stat(otherFileSystem, &there) == 0 && here.st_dev != there.st_dev
    }

    /// A quarantined PDF whose reason says it came from an inbox on the tmpfs.
    static func quarantined(_ harness: DaemonHarness, inbox: String) throws -> String {
        let mailbox = harness.quarantine + "/Shm"
        try FileManager.default.createDirectory(atPath: mailbox, withIntermediateDirectories: true)
        let file = mailbox + "/report.pdf"
        try Data("%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n".utf8).write(to: URL(fileURLWithPath: file))
        try "no handler claimed it (content type com.adobe.pdf, quarantined 2026-11-26T10:00:00Z)\nfrom \(inbox)/report.pdf\n"
            .write(toFile: file + ".reason", atomically: true, encoding: .utf8)
        return file
    }

    static func harness(inbox: String) throws -> DaemonHarness {
        try DaemonHarness(extraInbox: """
            [[inbox]]
            path = "\(inbox)"
            kind = "directory"
            default_mailbox = "Shm"
            """)
    }

    @Test(.enabled(if: onAnotherFileSystem(), "needs /dev/shm on another file system than the temporary folder"))
    func aCopyThatCannotBeSyncedLeavesTheFileInQuarantine() throws {
        let inbox = Self.otherFileSystem + "/docroute-release-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: inbox) }
        let harness = try Self.harness(inbox: inbox)
        defer { harness.remove() }
        let file = try Self.quarantined(harness, inbox: inbox)

        // The first fsync docroutectl makes is the copy's.
        let failed = try CtlProcess.run(["quarantine", "release", file, "--config", harness.configPath],
                                        environment: ["DOCROUTE_FAULT": "fsync:1:EIO"])
        #expect(failed.status == 1, "\(failed.output)\(failed.error)")
        #expect(failed.error.contains("kept \(file)"), "\(failed.error)")
        #expect(failed.error.contains("cannot write the copy"), "\(failed.error)")
        #expect(failed.error.contains("stays in the quarantine"), "\(failed.error)")
        #expect(FileManager.default.fileExists(atPath: file) && FileManager.default.fileExists(atPath: file + ".reason"))
        // Neither the copy nor its temporary is left in the inbox.
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: inbox)) ?? ["?"]).isEmpty)

        // Without the fault the same release goes through: the copy in the inbox, the file gone.
        let released = try CtlProcess.run(["quarantine", "release", file, "--config", harness.configPath])
        #expect(released.status == 0, "\(released.output)\(released.error)")
        #expect(released.output.contains("released \(file) → \(inbox)/report.pdf"), "\(released.output)")
        #expect(FileManager.default.fileExists(atPath: inbox + "/report.pdf"))
        #expect(!FileManager.default.fileExists(atPath: file) && !FileManager.default.fileExists(atPath: file + ".reason"))
    }
}
