import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A sandbox the daemon may not write to (EACCES): the source stays in the inbox and is
/// retried with backoff, other handlers are not held up, and it arrives once the folder is fixed.
/// Root ignores file modes, so the daemon runs under a uid of its own here.
@Suite(.serialized) struct SandboxPermissionIntegrationTests {
    @Test(.enabled(if: getuid() == 0, "running the daemon under another uid needs root"))
    func anUnwritableSandboxWaitsWithoutHoldingUpOthers() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        let uid: UInt32 = 48124
        try harness.start(runAs: (uid: uid, gid: uid))
        let molecules = FullDiskIntegrationTests.molecules
        try harness.drop("first.pdb", DeliveryIntegrationTests.pdb)
        let sandbox = harness.sandbox(molecules)
        #expect(harness.waitFor(sandbox + "/first.pdb"), "\(harness.daemonLog.suffix(1500))")
        // The handler (or an admin) takes away the daemon's write permission.
        chmod(sandbox, 0o500)
        let blocked = Array("HEADER    BLOCKED\n".utf8) + DeliveryIntegrationTests.pdb
        let source = try harness.drop("blocked.pdb", blocked)
        try harness.drop("other.txt", Array("not held up\n".utf8))
        #expect(harness.waitFor(harness.sandbox("org.docroute.textviewer") + "/other.txt"), "\(harness.daemonLog.suffix(1500))")
        #expect(harness.waitUntil(timeout: 10) { harness.daemonLog.contains("will try again") && harness.daemonLog.contains("blocked.pdb") },
                "\(harness.daemonLog.suffix(1500))")
        usleep(1_500_000)
        #expect(FileManager.default.contents(atPath: source) == Data(blocked), "the source waits in the inbox, untouched")
        #expect(!FileManager.default.fileExists(atPath: sandbox + "/blocked.pdb"))
        chmod(sandbox, 0o750)
        #expect(harness.waitFor(sandbox + "/blocked.pdb", timeout: 40), "retried after the fix: \(harness.daemonLog.suffix(1500))")
        #expect(harness.waitForInboxDrained())
        #expect(FileManager.default.contents(atPath: sandbox + "/blocked.pdb") == Data(blocked))
        let names = try FileManager.default.contentsOfDirectory(atPath: sandbox).sorted()
        #expect(names == ["blocked.pdb", "first.pdb"], "once each, no temporaries: \(names)")
    }

    /// docrouted as the unit runs it (its own uid, CAP_CHOWN and CAP_FOWNER
    /// only) gives the sandbox to the handler alone: 0700 folders, files the handler's with
    /// nothing for group or others, and an ACL entry for docrouted's uid only. A member of
    /// docrouted's group (the admin group, the mail delivery agent) can neither read a document
    /// nor plant a file in a mailbox.
    @Test(.enabled(if: getuid() == 0, "running the daemon under another uid needs root"))
    func theAdminGroupGetsNoDocuments() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        let daemon: UInt32 = 48_124, handler: UInt32 = 48_125, adminMember: UInt32 = 48_126
        let manifest = harness.handlers + "/molecules.plist"
        var text = try String(contentsOfFile: manifest, encoding: .utf8)
        let user = try #require(text.range(of: "<key>DocRouteUser</key>\n<string>root</string>"))
        text.replaceSubrange(user, with: "<key>DocRouteUser</key>\n<string>\(handler)</string>")
        try text.write(toFile: manifest, atomically: true, encoding: .utf8)
        try harness.start(runAs: (uid: daemon, gid: daemon), capabilities: ["chown", "fowner"])
        chmod(harness.root, 0o711)
        let sandbox = harness.sandbox(FullDiskIntegrationTests.molecules)
        try harness.drop("first.pdb", DeliveryIntegrationTests.pdb)
        #expect(harness.waitFor(sandbox + "/first.pdb"), "\(harness.daemonLog.suffix(1500))")
        #expect(harness.waitForInboxDrained())

        var status = stat()
        #expect(stat(sandbox + "/first.pdb", &status) == 0)
        #expect((status.st_uid, status.st_gid) == (handler, handler), "the handler's, group included")
        #expect(status.st_mode & 0o007 == 0)
        var path = harness.containers + "/" + FullDiskIntegrationTests.molecules
        for component in ["", "/Documents", "/Inbox", "/Inbox"] {
            path += component
            #expect(stat(path, &status) == 0)
            #expect((status.st_uid, status.st_gid) == (handler, handler), "\(path)")
            #expect(status.st_mode & 0o007 == 0, "\(path): nothing for others")
        }
        let admin = (uid: adminMember, gid: daemon)
        #expect(try SandboxConfinement.run(as: admin, ["/bin/cat", sandbox + "/first.pdb"]) != 0, "an admin-group member reads nothing")
        #expect(try SandboxConfinement.run(as: admin, ["/usr/bin/touch", sandbox + "/planted.pdb"]) != 0, "nor plants a file")
        #expect(try SandboxConfinement.run(as: (daemon, daemon), ["/bin/cat", sandbox + "/first.pdb"]) == 0, "docrouted's uid still reads it")
        #expect(try SandboxConfinement.run(as: (handler, handler), ["/bin/cat", sandbox + "/first.pdb"]) == 0, "the handler reads it")
        // docrouted keeps working in the folders it gave away: the next file and a mailbox of its own.
        try harness.drop("second.pdb", DeliveryIntegrationTests.pdb)
        try harness.drop("third.pdb", DeliveryIntegrationTests.pdb, mailbox: "Lab")
        #expect(harness.waitFor(sandbox + "/second.pdb"), "\(harness.daemonLog.suffix(1500))")
        #expect(harness.waitFor(harness.sandbox(FullDiskIntegrationTests.molecules, mailbox: "Lab") + "/third.pdb"), "\(harness.daemonLog.suffix(1500))")
        #expect(!harness.daemonLog.contains("delivery failed"), "\(harness.daemonLog.suffix(1500))")
    }
}

enum SandboxConfinement {
    /// Runs `command` as a uid and gid with no supplementary groups; its exit status.
    static func run(as identity: (uid: UInt32, gid: UInt32), _ command: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = ["--reuid=\(identity.uid)", "--regid=\(identity.gid)", "--clear-groups", "--"] + command
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}
