import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Hostile or odd things dropped into an inbox: each is delivered safely or quarantined with a
/// reason, and none of them stops the files behind it.
@Suite(.serialized) struct BadInputIntegrationTests {
    static let pdb = DeliveryIntegrationTests.pdb
    static let molecules = "com.sunsetlakesoftware.molecules"

    @Test func oddNamesAndEmptyFilesAreDelivered() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        try harness.drop("empty.txt", [])
        try harness.drop("line\nbreak.pdb", Self.pdb)
        let long = String(repeating: "a", count: 251) + ".pdb"
        try harness.drop(long, Self.pdb)
        #expect(harness.waitForInboxDrained(), "\(harness.daemonLog.suffix(1500))")
        #expect(FileManager.default.contents(atPath: harness.sandbox("org.docroute.textviewer") + "/empty.txt") == Data())
        let names = try FileManager.default.contentsOfDirectory(atPath: harness.sandbox(Self.molecules))
        #expect(names.contains(long), "a 255-byte name is kept: \(names)")
        #expect(names.count == 2)
        #expect(!names.contains { $0.contains("\n") }, "control characters never reach a sandbox name: \(names)")
    }

    @Test func hardLinksSocketsAndHugeFilesAreQuarantined() throws {
        let harness = try DaemonHarness(extraConfig: "max_file_size = 1048576")
        defer { harness.remove() }
        try harness.start()
        // A hard link to a file the dropper may not own.
        let outside = harness.root + "/secret.pdb"
        try Data(Self.pdb).write(to: URL(fileURLWithPath: outside))
        link(outside, harness.inbox + "/linked.pdb")
        // A sparse file over max_file_size (1 MiB here; 4 GiB by default).
        let sparse = harness.root + "/.sparse"
        let fd = open(sparse, O_WRONLY | O_CREAT, 0o644)
        ftruncate(fd, 5 << 30)
        close(fd)
        rename(sparse, harness.inbox + "/huge.pdb")
        // A Unix socket bound in the inbox.
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let path = harness.inbox + "/sock.pdb"
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() where index < raw.count - 1 { raw[index] = byte }
        }
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        defer { close(listener) }
        try harness.drop("after.pdb", Self.pdb)
        #expect(harness.waitFor(harness.sandbox(Self.molecules) + "/after.pdb"), "\(harness.daemonLog.suffix(1500))")
        for name in ["linked.pdb", "huge.pdb", "sock.pdb"] {
            #expect(harness.waitFor(harness.quarantine + "/Inbox/\(name).reason"), "\(name): \(harness.daemonLog.suffix(1500))")
        }
        let reason = try String(contentsOfFile: harness.quarantine + "/Inbox/huge.pdb.reason", encoding: .utf8)
        #expect(reason.contains("max_file_size"))
        #expect(!FileManager.default.fileExists(atPath: harness.sandbox(Self.molecules) + "/linked.pdb"))
        #expect(FileManager.default.fileExists(atPath: outside), "the link's target is untouched")
    }

    @Test(.enabled(if: getuid() == 0, "creating a device node (mknod) needs root"))
    func aDeviceNodeIsQuarantinedAsRoot() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        // The same device as /dev/null (1,3): reading it would never end if the daemon followed it.
        #expect(mknod(harness.inbox + "/null.pdb", S_IFCHR | 0o644, makedev(1, 3)) == 0, "mknod: \(String(cString: strerror(errno)))")
        #expect(harness.waitFor(harness.quarantine + "/Inbox/null.pdb.reason"), "\(harness.daemonLog.suffix(1500))")
    }
}

private func makedev(_ major: UInt32, _ minor: UInt32) -> dev_t {
    dev_t((major << 8) | minor)
}
