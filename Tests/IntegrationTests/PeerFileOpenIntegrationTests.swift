import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `open` of a file reads it as the client, with the client's own groups, never docrouted's.
@Suite(.serialized) struct PeerFileOpenIntegrationTests {
    static let pdb = DeliveryIntegrationTests.pdb

    /// The daemon runs as root with supplementary group 0; the client runs as nobody. A 0640
    /// root:root file in a 0750 root:root folder is readable through group 0 only, so nobody's
    /// `open` of it is refused; a file nobody may read is delivered.
    @Test(.enabled(if: getuid() == 0, "the client runs as nobody, which needs root to setuid"))
    func openReadsWithThePeersGroupsNotTheDaemons() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        PeerFlood.openRoot(harness)
        let secret = harness.root + "/secret"
        #expect(mkdir(secret, 0o750) == 0)
        #expect(chown(secret, 0, 0) == 0 && chmod(secret, 0o750) == 0)
        try Data(Self.pdb).write(to: URL(fileURLWithPath: secret + "/group-only.pdb"))
        #expect(chmod(secret + "/group-only.pdb", 0o640) == 0)
        let open = harness.root + "/open"
        #expect(mkdir(open, 0o755) == 0 && chmod(open, 0o755) == 0)
        try Data(Self.pdb).write(to: URL(fileURLWithPath: open + "/public.pdb"))
        #expect(chmod(open + "/public.pdb", 0o644) == 0)

        let refused = try PeerFlood.run(socket: harness.socket, connections: 1, seconds: 0,
                                        line: #"{"type":"open","id":"1","url":"file://\#(secret)/group-only.pdb"}"#)
        #expect(Set(refused.replies.keys) == ["not-permitted"], "\(refused.output)")
        let copied = (try? FileManager.default.subpathsOfDirectory(atPath: harness.containers)) ?? []
        #expect(!copied.contains { $0.hasSuffix("group-only.pdb") }, "never copied: \(copied)")

        let allowed = try PeerFlood.run(socket: harness.socket, connections: 1, seconds: 0,
                                        line: #"{"type":"open","id":"1","url":"file://\#(open)/public.pdb"}"#)
        #expect(Set(allowed.replies.keys) == ["opened"], "\(allowed.output)")
        #expect(FileManager.default.fileExists(atPath: harness.sandbox("com.sunsetlakesoftware.molecules", mailbox: "Shared") + "/public.pdb"))
    }
}
