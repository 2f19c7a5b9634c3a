import DocRouteTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A full disk end to end (issues #4 and #8): the sandboxes live on a small tmpfs the test mounts
/// itself; deliveries wait with the sources in the inbox, nothing half-written appears under a
/// final name, and everything arrives once the file system is grown.
@Suite(.serialized) struct FullDiskIntegrationTests {
    static let molecules = "com.sunsetlakesoftware.molecules"

    static func run(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw HarnessError("\(arguments.joined(separator: " ")) exited with \(process.terminationStatus)") }
    }

    /// Each name in `folder` (temporaries aside) with its bytes.
    static func contents(of folder: String) -> [String: Data] {
        var found: [String: Data] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where !name.hasPrefix(".") {
            found[name] = FileManager.default.contents(atPath: folder + "/" + name)
        }
        return found
    }

    @Test(.enabled(if: getuid() == 0, "mounting a tmpfs needs root"))
    func deliveriesWaitForSpaceAndResumeWhenItReturns() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try FileManager.default.createDirectory(atPath: harness.containers, withIntermediateDirectories: true)
        try Self.run(["/usr/bin/mount", "-t", "tmpfs", "-o", "size=2m,mode=0755", "tmpfs", harness.containers])
        defer {
            harness.stop()
            try? Self.run(["/usr/bin/umount", "-l", harness.containers])
        }
        try harness.start()
        // 40 files of 128 KiB: 5 MiB for a 2 MiB file system.
        var expected: [String: Data] = [:]
        for index in 0..<40 {
            var bytes = Array("HEADER    FULL \(index)\n".utf8)
            bytes += (0..<(128 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) }
            expected[String(format: "big%02d.pdb", index)] = Data(bytes)
        }
        for (name, bytes) in expected.sorted(by: { $0.key < $1.key }) { try harness.drop(name, Array(bytes)) }
        let sandbox = harness.sandbox(Self.molecules)
        #expect(harness.waitUntil(timeout: 20) { harness.daemonLog.contains("will try again") && harness.daemonLog.contains("space") },
                "a full disk is logged as retryable: \(harness.daemonLog.suffix(2000))")
        // Let a few retries pass while the disk stays full.
        usleep(3_000_000)
        let waiting = Self.contents(of: harness.inbox)
        let arrived = Self.contents(of: sandbox)
        #expect(!waiting.isEmpty, "deliveries wait: sources stay in the inbox")
        // Every file in backoff counts as waiting in status.
        #expect(ChangedSourceIntegrationTests.waiting(harness) == waiting.count, "status counts the \(waiting.count) files in backoff")
        #expect(arrived.count < expected.count)
        for (name, bytes) in arrived {
            #expect(bytes == expected[name], "\(name) under its final name is complete (\(bytes.count) bytes)")
        }
        for (name, bytes) in waiting {
            #expect(bytes == expected[name], "source \(name) untouched")
        }
        #expect(Set(waiting.keys).union(arrived.keys) == Set(expected.keys), "nothing lost while full")

        try Self.run(["/usr/bin/mount", "-o", "remount,size=64m", harness.containers])
        // Backoff doubles to at most 60 s; three seconds of failures keep it at a few seconds.
        let drained = harness.waitUntil(timeout: 90) { Self.contents(of: sandbox).count == expected.count }
        #expect(drained, "everything arrives once there is room: \(harness.daemonLog.suffix(2000))")
        #expect(harness.waitForInboxDrained(timeout: 30))
        #expect(Self.contents(of: sandbox) == expected, "each file once, byte for byte, under its own name")
        let temporaries = ((try? FileManager.default.contentsOfDirectory(atPath: sandbox)) ?? []).filter { $0.hasPrefix(".") }
        #expect(temporaries.isEmpty, "no temporary left behind: \(temporaries)")
    }

    /// The ledger's own file system fills up: no copy may be left under a final name without its
    /// ledger row, or the retry would deliver it a second time as `name-1`.
    @Test(.enabled(if: getuid() == 0, "mounting a tmpfs needs root"))
    func aFullLedgerDiskDeliversNothingTwice() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        let state = harness.root + "/state"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        try Self.run(["/usr/bin/mount", "-t", "tmpfs", "-o", "size=4m,mode=0755", "tmpfs", state])
        defer {
            harness.stop()
            try? Self.run(["/usr/bin/umount", "-l", state])
        }
        try harness.start()
        try harness.drop("before.pdb", DeliveryIntegrationTests.pdb)
        #expect(harness.waitForInboxDrained())
        // Fill what is left of the ledger's file system.
        let ballast = state + "/ballast"
        let fd = open(ballast, O_WRONLY | O_CREAT, 0o600)
        let chunk = [UInt8](repeating: 0xAB, count: 64 << 10)
        while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
        close(fd)
        var expected: [String: Data] = ["before.pdb": Data(DeliveryIntegrationTests.pdb)]
        for index in 0..<30 {
            let name = String(format: "ledger%02d.pdb", index)
            expected[name] = Data(Array("HEADER    LEDGER \(index)\n".utf8) + DeliveryIntegrationTests.pdb)
            try harness.drop(name, Array(expected[name]!))
        }
        #expect(harness.waitUntil(timeout: 20) { harness.daemonLog.contains("will try again") },
                "a full ledger disk is logged as retryable: \(harness.daemonLog.suffix(2000))")
        usleep(2_000_000)
        #expect(!Self.contents(of: harness.inbox).isEmpty, "sources wait in the inbox")
        unlink(ballast)
        let sandbox = harness.sandbox(Self.molecules)
        #expect(harness.waitUntil(timeout: 90) { Self.contents(of: sandbox).count >= expected.count && Self.contents(of: harness.inbox).isEmpty },
                "everything arrives once the ledger has room: \(harness.daemonLog.suffix(2000))")
        let arrived = Self.contents(of: sandbox)
        #expect(Set(arrived.keys) == Set(expected.keys), "each file once under its own name; extra: \(Set(arrived.keys).subtracting(expected.keys).sorted())")
        #expect(arrived == expected, "byte for byte")
        // And each is owed exactly once.
        let client = try LineClient(path: harness.socket)
        defer { client.close() }
        try client.send(["type": "subscribe", "id": "1", "bundleIdentifier": Self.molecules])
        #expect(client.readMessage()?["pending"] as? Int == expected.count)
    }
}
