import DocRouteTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What docrouted says when it cannot start, and the identities it gives deliveries, when the
/// system's I/O misbehaves.
@Suite(.serialized) struct StartFailureIntegrationTests {
    static let molecules = FullDiskIntegrationTests.molecules

    /// A second docrouted on the same state must stop with exit status 1 and say why, though its
    /// stderr (a pipe) is full for a moment when it says it: the line is written again until it
    /// goes through, not lost.
    @Test func theLineOfAFailedStartIsNotLostWhenStderrIsFullForAMoment() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        #expect(fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK) == 0)
        let filler = [UInt8](repeating: UInt8(ascii: "."), count: 4096)
        var filled = 0
        while true {
            let count = write(ends[1], filler, filler.count)
            if count <= 0 { break }
            filled += count
        }
        #expect(filled > 0)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: DaemonHarness.binDirectory + "/docrouted")
        process.arguments = ["--config", harness.configPath]
        process.standardError = FileHandle(fileDescriptor: ends[1], closeOnDealloc: false)
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        close(ends[1])
        // The pipe stays full while the daemon starts and fails; then it is read.
        usleep(500_000)
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let count = chunk.withUnsafeMutableBytes { read(ends[0], $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        close(ends[0])
        process.waitUntilExit()
        let text = String(decoding: bytes.drop { $0 == UInt8(ascii: ".") }, as: UTF8.self)
        #expect(process.terminationReason == .exit && process.terminationStatus == 1, "\(process.terminationReason) \(process.terminationStatus)")
        #expect(text.contains("another docrouted"), "the reason reached stderr: \(text.debugDescription)")
        #expect(harness.process?.isRunning == true)
    }

    /// Delivery identifiers come from the kernel's generator: with `/dev/urandom` giving nothing
    /// (as under injected I/O faults), every delivery still gets an identifier of its own, so no
    /// ledger row is written twice under one (`UNIQUE constraint failed: delivery.deliveryID`).
    @Test(.enabled(if: geteuid() == 0, "a private mount namespace needs root"))
    func deliveryIdentifiersDoNotDependOnDevURandom() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start(shell: ["/usr/bin/unshare", "-m", "--propagation", "private", "/bin/sh", "-c",
                                  "mount --bind /dev/null /dev/urandom && exec \"$0\" \"$@\""])
        let names = (0..<4).map { "same\($0).pdb" }
        for name in names { try harness.drop(name, DeliveryIntegrationTests.pdb) }
        #expect(harness.waitForInboxDrained(timeout: 20), "\(harness.daemonLog.suffix(2000))")
        let delivered = Set((try? FileManager.default.contentsOfDirectory(atPath: harness.sandbox(Self.molecules))) ?? [])
        #expect(delivered == Set(names), "\(delivered.sorted())")
        #expect(!harness.daemonLog.contains("UNIQUE constraint"), "\(harness.daemonLog.suffix(2000))")
        let client = try LineClient(path: harness.socket, timeout: 2)
        defer { client.close() }
        try client.send(["type": "subscribe", "id": "1", "bundleIdentifier": Self.molecules])
        var identifiers: Set<String> = []
        for message in client.readMessages(upTo: 8) {
            if let id = message["deliveryID"] as? String { identifiers.insert(id) }
        }
        #expect(identifiers.count == names.count, "one identifier each: \(identifiers.sorted())")
    }
}
