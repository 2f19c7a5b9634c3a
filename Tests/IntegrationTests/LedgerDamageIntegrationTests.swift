import DocRouteTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// End to end: docrouted refuses a damaged ledger with the steps to recover
/// (exit status 3), `docrouted --recover-ledger` rebuilds it from the sandboxes so every
/// unacknowledged document is announced again, and a ledger removed while the daemon runs stops
/// it at once, loudly. `make chaos` runs the long form (DOCROUTE_CHAOS_LEDGER_FILES files).
@Suite(.serialized) struct LedgerDamageIntegrationTests {
    static let molecules = FullDiskIntegrationTests.molecules

    /// The `status` reply, asked over the socket.
    static func status(_ harness: DaemonHarness) -> [String: Any]? {
        guard let client = try? LineClient(path: harness.socket) else { return nil }
        defer { client.close() }
        try? client.send(["type": "status", "id": "s"])
        return client.readMessage()
    }

    static func pending(_ harness: DaemonHarness, _ bundle: String) -> Int? {
        let handlers = status(harness)?["handlers"] as? [[String: Any]]
        return handlers?.first { $0["bundleIdentifier"] as? String == bundle }?["pending"] as? Int
    }

    /// Runs docrouted with `arguments` to its end: exit status and output.
    static func docrouted(_ harness: DaemonHarness, _ arguments: [String]) throws -> (status: Int32, output: String) {
        try DaemonHarness.run(DaemonHarness.binDirectory + "/docrouted", ["--config", harness.configPath] + arguments)
    }

    /// Random bytes over every third page of the middle third of ledger.sqlite (after a clean
    /// stop checkpointed it), as in the issue; at least page 2 when the file is small.
    static func damage(_ path: String, seed: UInt64) throws {
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        let pages = size / 4096
        let handle = try #require(FileHandle(forWritingAtPath: path))
        defer { try? handle.close() }
        var generator = SplitMix(seed: seed)
        let targets = pages < 9 ? Array(1..<max(2, pages)) : Array(stride(from: pages / 3, to: pages * 2 / 3, by: 3))
        for page in targets {
            try handle.seek(toOffset: UInt64(page * 4096))
            handle.write(Data((0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) }))
        }
    }

    static func deliverAndDamage(_ harness: DaemonHarness, files: Int) throws -> [String: Data] {
        try harness.start()
        var expected: [String: Data] = [:]
        for index in 0..<files {
            let bytes = Array("HEADER    LEDGER \(index)\n".utf8) + DeliveryIntegrationTests.pdb
            let name = String(format: "doc%05d.pdb", index)
            try harness.drop(name, bytes)
            expected[name] = Data(bytes)
        }
        #expect(harness.waitForInboxDrained(timeout: 30 + Double(files) / 50), "\(harness.daemonLog.suffix(1500))")
        #expect(pending(harness, molecules) == files)
        harness.stop()
        // A clean stop checkpointed the ledger into ledger.sqlite and emptied its -wal.
        let wal = try? FileManager.default.attributesOfItem(atPath: harness.root + "/state/ledger.sqlite-wal")[.size] as? Int
        #expect((wal ?? 0) == 0, "the -wal holds \(wal ?? 0) bytes after a clean stop")
        try damage(harness.root + "/state/ledger.sqlite", seed: UInt64(files))
        return expected
    }

    static func refusedThenRecovered(_ harness: DaemonHarness, expected: [String: Data]) throws {
        // Refused, with the steps, exit status 3.
        #expect(throws: HarnessError.self) { try harness.start() }
        #expect(harness.process.map { !$0.isRunning && $0.terminationStatus == 3 } == true, "\(harness.daemonLog.suffix(1500))")
        #expect(harness.daemonLog.contains("ledger-damaged") || harness.daemonLog.contains("is damaged"), "\(harness.daemonLog.suffix(1500))")
        #expect(harness.daemonLog.contains("docrouted --recover-ledger"), "the steps: \(harness.daemonLog.suffix(1500))")
        // Nothing delivered on a damaged ledger meanwhile.
        try harness.drop("late.pdb", DeliveryIntegrationTests.pdb)

        let recovered = try docrouted(harness, ["--recover-ledger"])
        #expect(recovered.status == 0, "\(recovered.output)")
        #expect(recovered.output.contains("documents found in the sandboxes: \(expected.count)"), "\(recovered.output)")
        #expect(recovered.output.contains("ledger.sqlite.damaged-"), "\(recovered.output)")

        try harness.start()
        #expect(harness.waitForInboxDrained(), "\(harness.daemonLog.suffix(1500))")
        // Every document is owed again (none was acknowledged), the late one too; none lost.
        #expect(harness.waitUntil(timeout: 10) { pending(harness, molecules) == expected.count + 1 },
                "pending \(pending(harness, molecules) ?? -1) of \(expected.count + 1)")
        let sandbox = harness.sandbox(molecules)
        for (name, bytes) in expected {
            #expect(FileManager.default.contents(atPath: sandbox + "/" + name) == bytes, "\(name)")
        }
        // A subscriber hears of them.
        let client = try LineClient(path: harness.socket)
        defer { client.close() }
        try client.send(["type": "subscribe", "id": "1", "bundleIdentifier": molecules])
        var announced: Set<String> = []
        let deadline = Date().addingTimeInterval(20)
        while announced.count < min(expected.count + 1, 32), Date() < deadline, let message = client.readMessage() {
            if let delivery = message["deliveryID"] as? String { announced.insert(delivery) }
        }
        #expect(announced.count >= min(expected.count + 1, 32), "events after the rebuild: \(announced.count)")
        harness.stop()
    }

    @Test func aDamagedLedgerIsRefusedAndRecoverLedgerBringsEveryDocumentBack() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        let expected = try Self.deliverAndDamage(harness, files: 40)
        try Self.refusedThenRecovered(harness, expected: expected)
    }

    /// `make chaos`: thousands of deliveries, then random bytes in the middle pages.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["DOCROUTE_CHAOS_LEDGER_FILES"] != nil, "make chaos sets DOCROUTE_CHAOS_LEDGER_FILES"))
    func aLargeDamagedLedgerIsRecovered() throws {
        let files = Int(ProcessInfo.processInfo.environment["DOCROUTE_CHAOS_LEDGER_FILES"] ?? "") ?? 5000
        let harness = try DaemonHarness()
        defer { harness.remove() }
        let expected = try Self.deliverAndDamage(harness, files: files)
        try Self.refusedThenRecovered(harness, expected: expected)
    }

    /// The ledger removed under the running daemon: it stops at once (exit 3) with a critical
    /// line, delivers nothing more, and the next start refuses with the steps until
    /// `--recover-ledger` rebuilt it.
    @Test func aLedgerRemovedWhileRunningStopsTheDaemon() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        try harness.drop("first.pdb", DeliveryIntegrationTests.pdb)
        #expect(harness.waitForInboxDrained(), "\(harness.daemonLog.suffix(1500))")
        #expect(unlink(harness.root + "/state/ledger.sqlite") == 0)
        #expect(harness.waitUntil(timeout: 5) { harness.process?.isRunning == false }, "docrouted stops")
        #expect(harness.process.map { !$0.isRunning && $0.terminationStatus == 3 } == true)
        #expect(harness.daemonLog.contains("stopping at once") && harness.daemonLog.contains("removed"), "\(harness.daemonLog.suffix(1500))")
        let second = try harness.drop("second.pdb", DeliveryIntegrationTests.pdb)
        #expect(throws: HarnessError.self) { try harness.start() }
        #expect(harness.process.map { !$0.isRunning && $0.terminationStatus == 3 } == true)
        #expect(harness.daemonLog.contains("missing"), "\(harness.daemonLog.suffix(1500))")
        #expect(FileManager.default.fileExists(atPath: second), "nothing delivered on no ledger")

        let recovered = try Self.docrouted(harness, ["--recover-ledger"])
        #expect(recovered.status == 0, "\(recovered.output)")
        try harness.start()
        #expect(harness.waitForInboxDrained(), "\(harness.daemonLog.suffix(1500))")
        #expect(harness.waitUntil(timeout: 10) { Self.pending(harness, Self.molecules) == 2 }, "first (found in the sandbox) and second")
    }
}
