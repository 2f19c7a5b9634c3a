import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A handler removed docrouted's temporary copy in its sandbox while it was written (as during a
/// symlink-swap attack): that is not the source vanishing. The source stays in its inbox, counts
/// as waiting in `status`, and is delivered on a later try. `make chaos` runs it with a larger
/// file (DOCROUTE_CHAOS_REMOVED_COPY_MIB).
@Suite(.serialized) struct RemovedCopyIntegrationTests {
    static let molecules = FullDiskIntegrationTests.molecules
    static var mebibytes: Int { Int(ProcessInfo.processInfo.environment["DOCROUTE_CHAOS_REMOVED_COPY_MIB"] ?? "") ?? 64 }

    /// Watches `folder` with inotify and removes the first `.docroute-*.tmp` created there once it
    /// holds some bytes (the copy under way); `removedName` is its name.
    final class CopyRemover: Sendable {
        let removed = Mutex<String?>(nil)
        let stop = Atomic<Bool>(false)
        let folder: String
        let watch: Int32

        init(folder: String) throws {
            self.folder = folder
            watch = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
            guard watch >= 0, inotify_add_watch(watch, folder, UInt32(IN_CREATE)) >= 0 else {
                throw HarnessError("inotify on \(folder): \(String(cString: strerror(errno)))")
            }
            Thread { [self] in run() }.start()
        }

        var removedName: String? { removed.withLock { $0 } }

        func finish() { stop.store(true, ordering: .releasing) }

        private func run() {
            defer { close(watch) }
            var buffer = [UInt8](repeating: 0, count: 65536)
            while !stop.load(ordering: .acquiring) {
                var poller = pollfd(fd: watch, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 50) > 0 else { continue }
                let count = buffer.withUnsafeMutableBytes { read(watch, $0.baseAddress, $0.count) }
                var offset = 0
                while count > 0, offset + 16 <= count {
                    let length = Int(buffer[offset + 12]) | Int(buffer[offset + 13]) << 8 | Int(buffer[offset + 14]) << 16 | Int(buffer[offset + 15]) << 24
                    let name = String(decoding: buffer[(offset + 16)..<(offset + 16 + length)].prefix { $0 != 0 }, as: UTF8.self)
                    offset += 16 + length
                    guard name.hasPrefix(".docroute-"), name.hasSuffix(".tmp") else { continue }
                    // Mid-copy: once the copy has bytes in it, at most a second later.
                    let path = folder + "/" + name
                    let deadline = Date().addingTimeInterval(1)
                    var info = stat()
                    while Date() < deadline, lstat(path, &info) == 0, info.st_size == 0 { usleep(200) }
                    if unlink(path) == 0 {
                        removed.withLock { $0 = name }
                        return
                    }
                }
            }
        }
    }

    @Test func aCopyRemovedInTheSandboxMidCopyIsDeliveredOnALaterTry() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        // The mailbox folder exists once a first file is delivered.
        try harness.drop("first.pdb", DeliveryIntegrationTests.pdb)
        #expect(harness.waitForInboxDrained(), "\(harness.daemonLog.suffix(1500))")
        let sandbox = harness.sandbox(Self.molecules)
        let remover = try CopyRemover(folder: sandbox)
        defer { remover.finish() }

        let hidden = harness.inbox + "/.big.pdb"
        try ChangedSourceIntegrationTests.writeLarge(hidden, mebibytes: Self.mebibytes)
        let expected = try #require(FileManager.default.contents(atPath: hidden))
        #expect(rename(hidden, harness.inbox + "/big.pdb") == 0)

        #expect(harness.waitUntil(timeout: 30) { remover.removedName != nil }, "the copy was seen and removed")
        #expect(harness.waitUntil(timeout: 30) { harness.daemonLog.contains("delivery failed") }, "\(harness.daemonLog.suffix(1500))")
        // Not taken for a vanished source: it waits for another try, and status says so.
        let source = harness.inbox + "/big.pdb"
        var sawWaiting = false
        #expect(harness.waitUntil(timeout: 60) {
            if FileManager.default.fileExists(atPath: source), ChangedSourceIntegrationTests.waiting(harness) == 1 { sawWaiting = true }
            return FileManager.default.fileExists(atPath: sandbox + "/big.pdb") && !FileManager.default.fileExists(atPath: source)
        }, "delivered on a later try: \(harness.daemonLog.suffix(2000))")
        #expect(sawWaiting, "status counted it as waiting until it was delivered")
        #expect(FileManager.default.contents(atPath: sandbox + "/big.pdb") == expected)
        #expect(harness.waitForInboxDrained(timeout: 10))
        #expect(harness.waitUntil(timeout: 5) { ChangedSourceIntegrationTests.waiting(harness) == 0 }, "nothing left waiting")
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: sandbox)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
        #expect(names == ["big.pdb", "first.pdb"], "once, under its own name: \(names)")
    }
}
