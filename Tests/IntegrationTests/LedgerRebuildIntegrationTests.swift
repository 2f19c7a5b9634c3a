import DocRouteTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `docrouted --recover-ledger` against handlers that work against it: a link planted in a
/// container leads it nowhere, and no document (a huge sparse one, or one too slow to digest)
/// holds the daemon's start for long. `make chaos` runs the sparse file at 16 TiB less 1 MiB
/// (DOCROUTE_CHAOS_SPARSE_GIB) and more slow documents (DOCROUTE_CHAOS_SLOW_DOCUMENTS).
@Suite(.serialized) struct LedgerRebuildIntegrationTests {
    static let molecules = FullDiskIntegrationTests.molecules
    static let textviewer = "org.docroute.textviewer"
    static let pdb = DeliveryIntegrationTests.pdb

    /// Runs docrouted with `arguments` for at most `timeout` seconds: exit status (nil when it was
    /// stopped at the timeout) and output.
    static func docrouted(_ harness: DaemonHarness, _ arguments: [String], timeout: TimeInterval) throws -> (status: Int32?, output: String, seconds: Double) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: DaemonHarness.binDirectory + "/docrouted")
        process.arguments = ["--config", harness.configPath] + arguments
        let output = harness.root + "/recover.out"
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        defer { try? handle.close() }
        process.standardOutput = handle
        process.standardError = handle
        let started = Date()
        try process.run()
        let deadline = started.addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        var status: Int32?
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
        } else {
            status = process.terminationStatus
        }
        process.waitUntilExit()
        return (status, (try? String(contentsOfFile: output, encoding: .utf8)) ?? "", Date().timeIntervalSince(started))
    }

    /// The events a subscriber of `bundle` is sent within `seconds`: their file URLs.
    static func announced(_ harness: DaemonHarness, _ bundle: String, seconds: TimeInterval) throws -> [String] {
        let client = try LineClient(path: harness.socket, timeout: 0.25)
        defer { client.close() }
        try client.send(["type": "subscribe", "id": "1", "bundleIdentifier": bundle])
        var urls: [String] = []
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            guard let message = client.readMessage() else { continue }
            // The first event of a subscription is a `launch`, its URL among the launch options.
            let options = message["launchOptions"] as? [String: Any]
            if let url = message["url"] as? String ?? options?["UIApplicationLaunchOptionsURLKey"] as? String { urls.append(url) }
        }
        return urls
    }

    /// Delivers `secret.pdb` to molecules and `own.txt` to the text viewer, then stops.
    static func deliverTwo(_ harness: DaemonHarness) throws {
        try harness.start()
        try harness.drop("secret.pdb", Self.pdb)
        try harness.drop("own.txt", Array("the text viewer's own\n".utf8))
        #expect(harness.waitForInboxDrained(), "\(harness.daemonLog.suffix(1500))")
        #expect(FileManager.default.fileExists(atPath: harness.sandbox(Self.textviewer) + "/own.txt"))
        harness.stop()
    }

    /// A handler replaced a folder of its container with a link into another handler's: the
    /// rebuild does not follow it, so the handler is told of no document of the other one.
    @Test(arguments: ["Documents", "Documents/Inbox"])
    func aLinkIntoAnotherContainerIsNotFollowed(linked: String) throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try Self.deliverTwo(harness)
        let attacker = harness.containers + "/" + Self.textviewer + "/" + linked
        let victim = harness.containers + "/" + Self.molecules + "/" + linked
        try FileManager.default.removeItem(atPath: attacker)
        #expect(symlink(victim, attacker) == 0)

        let recovered = try Self.docrouted(harness, ["--recover-ledger"], timeout: 60)
        #expect(recovered.status == 0, "\(recovered.output)")
        try harness.start()
        let urls = try Self.announced(harness, Self.textviewer, seconds: 2)
        #expect(!urls.contains { $0.contains("secret") }, "told of another handler's document: \(urls)")
        #expect(LedgerDamageIntegrationTests.pending(harness, Self.textviewer) == 0)
        // The owner of the document is still told of it, once, at its real path.
        let own = try Self.announced(harness, Self.molecules, seconds: 2)
        #expect(own == ["file://\(harness.sandbox(Self.molecules))/secret.pdb"], "\(own)")
        harness.stop()
    }

    static var sparseGiB: Int { Int(ProcessInfo.processInfo.environment["DOCROUTE_CHAOS_SPARSE_GIB"] ?? "") ?? 64 }

    /// A huge sparse file in a sandbox, a few bytes of it written: digested by its data only, the
    /// rebuild takes seconds, and the file is owed to its handler like any other.
    @Test func aHugeSparseFileDoesNotHoldTheRebuild() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try Self.deliverTwo(harness)
        let sparse = harness.sandbox(Self.molecules) + "/huge.pdb"
        let descriptor = open(sparse, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        #expect(descriptor >= 0)
        let header = Array("HEADER    SPARSE\n".utf8)
        let size = off_t(Self.sparseGiB) << 30 - (Self.sparseGiB >= 16384 ? 1 << 20 : 0)
        #expect(pwrite(descriptor, header, header.count, 0) == header.count)
        #expect(pwrite(descriptor, header, header.count, size / 2) == header.count)
        #expect(ftruncate(descriptor, size) == 0, "\(String(cString: strerror(errno)))")
        close(descriptor)

        let recovered = try Self.docrouted(harness, ["--recover-ledger"], timeout: 30)
        #expect(recovered.status == 0, "within 30 s (took \(recovered.seconds) s): \(recovered.output)")
        #expect(recovered.output.contains("documents found in the sandboxes: 3"), "\(recovered.output)")
        #expect(recovered.seconds < 20, "\(recovered.seconds) s")
        try harness.start()
        #expect(harness.waitUntil(timeout: 10) { LedgerDamageIntegrationTests.pending(harness, Self.molecules) == 2 },
                "secret.pdb and huge.pdb owed: \(LedgerDamageIntegrationTests.pending(harness, Self.molecules) ?? -1)")
        harness.stop()
    }

    static var slowDocuments: Int { Int(ProcessInfo.processInfo.environment["DOCROUTE_CHAOS_SLOW_DOCUMENTS"] ?? "") ?? 3 }

    /// Documents that take longer to digest than the bounds allow: one over the time a file may
    /// take is owed again undigested, said in a line; those left when the total is spent are
    /// measured by the daemon after it started, and owed (or kept) then.
    @Test func documentsOverTheTimeBoundsAreNamedAndStillOwed() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try Self.deliverTwo(harness)
        var chunk = Array("HEADER    SLOW\n".utf8)
        chunk += (0..<((1 << 20) - chunk.count)).map { UInt8(truncatingIfNeeded: $0 &* 131) }
        for index in 0..<Self.slowDocuments {
            let path = harness.sandbox(Self.molecules) + "/slow\(index).pdb"
            #expect(FileManager.default.createFile(atPath: path, contents: nil))
            let handle = try #require(FileHandle(forWritingAtPath: path))
            for _ in 0..<32 { handle.write(Data(chunk)) }
            try handle.close()
        }

        // Each file may take a millisecond: every slow one is skipped, named, owed undigested.
        let tight = try Self.docrouted(harness, ["--recover-ledger", "--recover-file-seconds", "0.001"], timeout: 60)
        #expect(tight.status == 0, "\(tight.output)")
        for index in 0..<Self.slowDocuments {
            #expect(tight.output.contains("slow\(index).pdb") && tight.output.contains("not digested"), "\(tight.output)")
        }
        try harness.start()
        let total = Self.slowDocuments + 1
        #expect(harness.waitUntil(timeout: 10) { LedgerDamageIntegrationTests.pending(harness, Self.molecules) == total },
                "\(LedgerDamageIntegrationTests.pending(harness, Self.molecules) ?? -1) of \(total)")
        harness.stop()

        // No time at all for the rebuild: the daemon starts at once and measures them after.
        let none = try Self.docrouted(harness, ["--recover-ledger", "--recover-total-seconds", "0"], timeout: 60)
        #expect(none.status == 0, "\(none.output)")
        #expect(none.output.contains("measured by the daemon after it starts"), "\(none.output)")
        try harness.start()
        #expect(harness.waitUntil(timeout: 30) { LedgerDamageIntegrationTests.pending(harness, Self.molecules) == total },
                "\(LedgerDamageIntegrationTests.pending(harness, Self.molecules) ?? -1) of \(total): \(harness.daemonLog.suffix(1500))")
        #expect(harness.waitUntil(timeout: 10) { LedgerDamageIntegrationTests.pending(harness, Self.textviewer) == 1 })
        let urls = Set(try Self.announced(harness, Self.molecules, seconds: 2))
        #expect(urls.count == total, "each once: \(urls.sorted())")
        harness.stop()
    }
}
