import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A sandbox the daemon may not write to (EACCES, issue #4): the source stays in the inbox and is
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
}
