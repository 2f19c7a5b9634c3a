import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A source changed while it is copied (touched, truncated) sees no
/// close-after-write afterwards. It is tried again once left alone, and counts as waiting in
/// `status` meanwhile. `make chaos` runs it with a 512 MiB file (DOCROUTE_CHAOS_CHANGED_MIB) and
/// a truncation too.
@Suite(.serialized) struct ChangedSourceIntegrationTests {
    static var mebibytes: Int { Int(ProcessInfo.processInfo.environment["DOCROUTE_CHAOS_CHANGED_MIB"] ?? "") ?? 96 }

    static func waiting(_ harness: DaemonHarness) -> Int? {
        let inboxes = LedgerDamageIntegrationTests.status(harness)?["inboxes"] as? [[String: Any]]
        return inboxes?.first?["waiting"] as? Int
    }

    /// Writes `mebibytes` MiB (a PDB header, then a pattern) to `path`.
    static func writeLarge(_ path: String, mebibytes: Int) throws {
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let handle = try #require(FileHandle(forWritingAtPath: path))
        defer { try? handle.close() }
        var chunk = Array("HEADER    CHANGED WHILE COPIED\n".utf8)
        chunk += (0..<((1 << 20) - chunk.count)).map { UInt8(truncatingIfNeeded: $0 &* 131) }
        for index in 0..<mebibytes {
            chunk[chunk.count - 1] = UInt8(truncatingIfNeeded: index)
            handle.write(Data(chunk))
        }
    }

    /// Changes `path` every millisecond until `stop` is set: new modification times, or (with
    /// `truncating`) one truncation to half its size first.
    static func keepChanging(_ path: String, truncating: Bool, stop: StopFlag) {
        var step: Int = 0
        var truncated = false
        while !stop.value.load(ordering: .acquiring) {
            if truncating && !truncated, let size = try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int {
                truncated = truncate(path, off_t(size / 2)) == 0
            }
            step += 1
            var times = [timespec(tv_sec: 1_700_000_000 + step, tv_nsec: 0), timespec(tv_sec: 1_700_000_000 + step, tv_nsec: 0)]
            _ = utimensat(AT_FDCWD, path, &times, 0)
            usleep(1000)
        }
    }

    func run(truncating: Bool) throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        let hidden = harness.inbox + "/.big.pdb"
        let path = harness.inbox + "/big.pdb"
        try Self.writeLarge(hidden, mebibytes: Self.mebibytes)
        let stop = StopFlag()
        let changer = Thread { Self.keepChanging(path, truncating: truncating, stop: stop) }
        #expect(rename(hidden, path) == 0)
        changer.start()
        defer { stop.value.store(true, ordering: .releasing) }
        #expect(harness.waitUntil(timeout: 30) { harness.daemonLog.contains("while it was copied") || harness.daemonLog.contains("truncated while") },
                "the copy saw the change: \(harness.daemonLog.suffix(1500))")
        #expect(harness.waitUntil(timeout: 5) { Self.waiting(harness) == 1 }, "it waits, and status says so: \(Self.waiting(harness) ?? -1)")
        usleep(1_500_000)
        #expect(Self.waiting(harness) == 1, "still waiting while it keeps changing")
        let sandbox = harness.sandbox(FullDiskIntegrationTests.molecules)
        #expect(!FileManager.default.fileExists(atPath: sandbox + "/big.pdb"), "never delivered while it changes")
        stop.value.store(true, ordering: .releasing)
        usleep(50_000)
        let final = try #require(FileManager.default.contents(atPath: path))
        // Left alone, it arrives whole (as it is now) without any new event.
        #expect(harness.waitFor(sandbox + "/big.pdb", timeout: 90), "tried again once quiet: \(harness.daemonLog.suffix(1500))")
        #expect(harness.waitForInboxDrained(timeout: 30))
        #expect(FileManager.default.contents(atPath: sandbox + "/big.pdb") == final)
        #expect(harness.waitUntil(timeout: 5) { Self.waiting(harness) == 0 })
    }

    @Test func aFileTouchedDuringItsCopyIsDeliveredOnceQuiet() throws {
        try run(truncating: false)
    }

    @Test(.enabled(if: ProcessInfo.processInfo.environment["DOCROUTE_CHAOS_CHANGED_MIB"] != nil, "make chaos sets DOCROUTE_CHAOS_CHANGED_MIB"))
    func aFileTruncatedDuringItsCopyIsDeliveredOnceQuiet() throws {
        try run(truncating: true)
    }
}

final class StopFlag: Sendable {
    let value = Atomic<Bool>(false)
}
