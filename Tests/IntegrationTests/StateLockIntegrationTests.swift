import DocRouteTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// One docrouted per state directory, and no daemon takes another's socket.
@Suite(.serialized) struct StateLockIntegrationTests {
    static let molecules = "com.sunsetlakesoftware.molecules"
    static let pdb = DeliveryIntegrationTests.pdb

    /// Runs another docrouted on `config` and returns its exit status and output; one still
    /// running after 20 s is stopped and reported as nil.
    func runSecond(config: String) throws -> (status: Int32?, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: DaemonHarness.binDirectory + "/docrouted")
        process.arguments = ["--config", config]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let deadline = Date().addingTimeInterval(20)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        var status: Int32? = nil
        if process.isRunning {
            process.terminate()
        } else {
            status = process.terminationStatus
        }
        process.waitUntilExit()
        return (status, String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
    }

    @Test func aSecondDaemonOnTheSameStateIsRefusedAndTheFirstDeliversEachFileOnce() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        let first = try #require(harness.process?.processIdentifier)

        let (status, output) = try runSecond(config: harness.configPath)
        #expect(status != nil && status != 0, "the second daemon must exit non-zero: \(output)")
        #expect(output.contains("another docrouted (pid \(first)) serves \(harness.root)/state"), "\(output)")
        #expect(!output.contains("docrouted ready"), "\(output)")

        // The first still serves, on its own socket, and delivers each file exactly once.
        let count = 60
        for index in 0..<count { try harness.drop("once\(index).pdb", Self.pdb) }
        #expect(harness.waitForInboxDrained(timeout: 30), "\(harness.daemonLog.suffix(2000))")
        let names = Set((try? FileManager.default.contentsOfDirectory(atPath: harness.sandbox(Self.molecules))) ?? [])
        #expect(names == Set((0..<count).map { "once\($0).pdb" }), "each exactly once: \(names.subtracting((0..<count).map { "once\($0).pdb" }).sorted())")
        let client = try LineClient(path: harness.socket)
        defer { client.close() }
        try client.send(["type": "subscribe", "id": "1", "bundleIdentifier": Self.molecules])
        let reply = try #require(client.readMessage())
        #expect(reply["pending"] as? Int == count, "\(reply)")
        #expect(harness.process?.isRunning == true)
    }

    @Test func aDaemonNeverTakesTheSocketAnotherServes() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        // Another state directory, the same socket path.
        let config = harness.root + "/other.toml"
        let text = try String(contentsOfFile: harness.configPath, encoding: .utf8)
            .replacingOccurrences(of: "state_directory = \"\(harness.root)/state\"", with: "state_directory = \"\(harness.root)/state2\"")
            .replacingOccurrences(of: "path = \"\(harness.inbox)\"", with: "path = \"\(harness.root)/drop2\"")
        try text.write(toFile: config, atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: harness.root + "/drop2", withIntermediateDirectories: true)
        var before = stat()
        #expect(lstat(harness.socket, &before) == 0)

        let (status, output) = try runSecond(config: config)
        #expect(status != nil && status != 0, "\(output)")
        #expect(output.contains("another daemon serves the socket \(harness.socket)"), "\(output)")
        var after = stat()
        #expect(lstat(harness.socket, &after) == 0 && after.st_ino == before.st_ino, "the first daemon's socket is untouched")
        let client = try LineClient(path: harness.socket)
        defer { client.close() }
        try client.send(["type": "hello", "protocol": 1])
        #expect(client.readMessage()?["type"] as? String == "welcome")

        // A socket left by a daemon that is gone is replaced; the daemon that stops removes its own.
        harness.crash()
        try harness.start()
        harness.stop()
        #expect(!FileManager.default.fileExists(atPath: harness.socket), "a stopped daemon removes the socket it created")
    }

    /// The lock belongs to the state directory itself: a lock file replaced (renamed over) while
    /// a daemon runs lets neither `--recover-ledger` nor a second daemon in beside it, and the
    /// first goes on delivering.
    @Test func aReplacedLockFileLetsNobodyInBesideTheRunningDaemon() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        let lock = harness.root + "/state/docrouted.lock"
        let planted = harness.root + "/state/planted.lock"
        #expect(FileManager.default.createFile(atPath: planted, contents: Data()))
        #expect(rename(planted, lock) == 0)

        let recovered = try LedgerDamageIntegrationTests.docrouted(harness, ["--recover-ledger"])
        #expect(recovered.status == 1, "--recover-ledger beside a running daemon: \(recovered.output)")
        #expect(recovered.output.contains("another docrouted"), "\(recovered.output)")
        #expect(!recovered.output.contains("documents found in the sandboxes"), "\(recovered.output)")
        let (status, output) = try runSecond(config: harness.configPath)
        #expect(status != nil && status != 0, "\(output)")
        #expect(output.contains("another docrouted"), "\(output)")

        try harness.drop("after.pdb", Self.pdb)
        #expect(harness.waitForInboxDrained(), "\(harness.daemonLog.suffix(2000))")
        #expect(FileManager.default.fileExists(atPath: harness.sandbox(Self.molecules) + "/after.pdb"))
        #expect(harness.process?.isRunning == true, "the running daemon must not stop: \(harness.daemonLog.suffix(2000))")
    }
}
