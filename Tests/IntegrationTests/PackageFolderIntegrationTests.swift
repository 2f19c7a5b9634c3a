import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A folder dropped where a file is expected (issue #4): a folder whose name gives a package type
/// (`LSTypeIsPackage`, or conforming to `com.apple.package`) is one document and is never broken up
/// as a mailbox; any other folder is a mailbox.
@Suite(.serialized) struct PackageFolderIntegrationTests {
    @Test func aPackageFolderIsKeptWholeAndAPlainFolderIsAMailbox() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        // Built aside, then renamed in whole, as a careful sender does.
        let staging = harness.root + "/staging"
        for folder in ["Report.rtfd", "Plain"] {
            try FileManager.default.createDirectory(atPath: staging + "/" + folder, withIntermediateDirectories: true)
        }
        try Data("{\\rtf1 hello}\n".utf8).write(to: URL(fileURLWithPath: staging + "/Report.rtfd/TXT.rtf"))
        try Data("inside a mailbox\n".utf8).write(to: URL(fileURLWithPath: staging + "/Plain/note.txt"))
        #expect(rename(staging + "/Report.rtfd", harness.inbox + "/Report.rtfd") == 0)
        #expect(rename(staging + "/Plain", harness.inbox + "/Plain") == 0)
        let viewer = "org.docroute.textviewer"
        #expect(harness.waitFor(harness.sandbox(viewer, mailbox: "Plain") + "/note.txt"), "a plain folder is a mailbox: \(harness.daemonLog.suffix(1500))")
        #expect(harness.waitUntil(timeout: 10) { harness.daemonLog.contains("package document left in the inbox") && harness.daemonLog.contains("Report.rtfd") },
                "\(harness.daemonLog.suffix(1500))")
        // A file dropped after both is delivered, so the package had its chance first.
        try harness.drop("after.txt", Array("after\n".utf8))
        #expect(harness.waitFor(harness.sandbox(viewer) + "/after.txt"))
        #expect(FileManager.default.contents(atPath: harness.inbox + "/Report.rtfd/TXT.rtf") == Data("{\\rtf1 hello}\n".utf8),
                "the package is whole and where it was")
        let containers = (try? FileManager.default.subpathsOfDirectory(atPath: harness.containers)) ?? []
        #expect(!containers.contains { $0.contains("Report.rtfd") || $0.hasSuffix("TXT.rtf") }, "never broken up: \(containers)")
        #expect(!harness.daemonLog.contains("mailbox=Report.rtfd"))
    }
}
