import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A kernel setting under /proc/sys that a test lowers and must put back.
struct KernelSetting {
    let path: String
    let original: String

    init(_ path: String) throws {
        self.path = path
        original = try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func set(_ value: Int) throws {
        try "\(value)\n".write(toFile: path, atomically: false, encoding: .utf8)
    }

    func restore() {
        try? (original + "\n").write(toFile: path, atomically: false, encoding: .utf8)
    }
}

/// The kernel's inotify limits (issues #4 and #8): a queue overflow loses nothing, and a watch limit
/// is named in the log while the folders that could be watched keep being served. The queue size
/// is machine-wide: it is lowered only until the daemon has started (it is fixed at inotify_init)
/// and restored on any way out.
@Suite(.serialized) struct InotifyLimitIntegrationTests {
    static let molecules = "com.sunsetlakesoftware.molecules"
    static let isRoot = getuid() == 0

    @Test(.enabled(if: isRoot, "lowering /proc/sys/fs/inotify/max_queued_events needs root"))
    func queueOverflowRescansAndLosesNothing() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        let setting = try KernelSetting("/proc/sys/fs/inotify/max_queued_events")
        defer { setting.restore() }
        try setting.set(16)
        try harness.start()
        setting.restore()
        // Stopped, the daemon reads nothing, so a queue of 16 events overflows for sure.
        try dropWhileStoppedThenExpectEachOnce(harness, count: 2000, prefix: "burst")
        let log = harness.daemonLog
        #expect(log.contains("inotify queue overflowed") && log.contains("rescanning"),
                "a clear line about the overflow and the rescan: \(log.suffix(2000))")
    }

    /// The daemon's own limit: no more than `max_queued_files` arrivals are held in memory; the
    /// rest wait in the inbox and are found by listing it again once those are delivered.
    @Test func moreFilesThanTheQueueHoldsWaitInTheInboxAndAllArrive() throws {
        let harness = try DaemonHarness(extraConfig: "max_queued_files = 300")
        defer { harness.remove() }
        try harness.start()
        // Stopped, the daemon finds all 1,500 events at once when it goes on.
        try dropWhileStoppedThenExpectEachOnce(harness, count: 1500, prefix: "queued")
        #expect(harness.daemonLog.contains("listing the inboxes again for the files left waiting there"), "\(harness.daemonLog.suffix(2000))")
    }

    /// Drops `count` distinct files while the daemon is stopped (SIGSTOP), lets it go on, and
    /// checks that each arrives exactly once, byte for byte, and that the inbox is emptied.
    func dropWhileStoppedThenExpectEachOnce(_ harness: DaemonHarness, count: Int, prefix: String) throws {
        var expected: [String: [UInt8]] = [:]
        for index in 0..<count {
            expected["\(prefix)\(index).pdb"] = Array("HEADER    \(prefix.uppercased()) \(index)\n".utf8) + DeliveryIntegrationTests.pdb
        }
        harness.signal(SIGSTOP)
        for (name, bytes) in expected { try harness.drop(name, bytes) }
        harness.signal(SIGCONT)
        let sandbox = harness.sandbox(Self.molecules)
        let delivered = harness.waitUntil(timeout: 180) {
            ((try? FileManager.default.contentsOfDirectory(atPath: sandbox)) ?? []).filter { !$0.hasPrefix(".") }.count >= count
        }
        #expect(delivered, "\(harness.daemonLog.suffix(3000))")
        #expect(harness.waitForInboxDrained(timeout: 30), "every source removed once its copy is committed")
        let files = try FileManager.default.contentsOfDirectory(atPath: sandbox)
        #expect(Set(files) == Set(expected.keys), "each file exactly once under its own name; extra: \(Set(files).subtracting(expected.keys).sorted().prefix(5))")
        let mismatched = expected.filter { FileManager.default.contents(atPath: sandbox + "/" + $0.key) != Data($0.value) }.map(\.key)
        #expect(mismatched.isEmpty, "byte for byte: \(mismatched.prefix(5))")
    }

    /// The watch limit is lowered for the daemon alone: it runs in a user namespace of its own whose
    /// user.max_inotify_watches is 10, the same ENOSPC as a lowered fs.inotify.max_user_watches, so
    /// no other process on the machine (root's, other tests' daemons) loses its watches meanwhile.
    @Test(.enabled(if: isRoot, "a user namespace with its own inotify limit needs root here"))
    func watchLimitIsNamedAndWatchedFoldersKeepBeingServed() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        let mailboxes = (0..<30).map { String(format: "Box%02d", $0) }
        for mailbox in mailboxes { try harness.drop("early-\(mailbox).txt", Array("early \(mailbox)\n".utf8), mailbox: mailbox) }
        // One watch for the handlers directory, one for the inbox, eight for mailboxes.
        try harness.start(shell: ["/usr/bin/unshare", "--user", "--map-root-user", "/bin/sh", "-c",
                                  #"echo 10 > /proc/sys/user/max_inotify_watches && exec "$0" "$@""#])
        let log = harness.daemonLog
        #expect(log.contains("max_user_watches"), "the log names the limit: \(log.suffix(2000))")
        #expect(log.contains("sysctl fs.inotify.max_user_watches"), "and says how to raise it: \(log.suffix(2000))")
        #expect(log.contains("user.max_inotify_watches (10)"), "and the namespace's own limit when that is the lower: \(log.suffix(2000))")
        let viewer = "org.docroute.textviewer"
        // Files already waiting are delivered from every mailbox, watched or not: the start-up scan reads them all.
        for mailbox in mailboxes {
            #expect(harness.waitFor(harness.sandbox(viewer, mailbox: mailbox) + "/early-\(mailbox).txt"), "\(mailbox): \(harness.daemonLog.suffix(1500))")
        }
        // New arrivals in the inbox itself (watched first) keep flowing.
        try harness.drop("late.txt", Array("late\n".utf8))
        #expect(harness.waitFor(harness.sandbox(viewer) + "/late.txt"), "\(harness.daemonLog.suffix(1500))")
        #expect(FileManager.default.contents(atPath: harness.sandbox(viewer) + "/late.txt") == Data("late\n".utf8))
        // A mailbox left unwatched is scanned every 30 s instead, so a late file there still arrives.
        for mailbox in mailboxes { try harness.drop("late-\(mailbox).txt", Array("late \(mailbox)\n".utf8), mailbox: mailbox) }
        for mailbox in mailboxes {
            #expect(harness.waitFor(harness.sandbox(viewer, mailbox: mailbox) + "/late-\(mailbox).txt", timeout: 45), "\(mailbox): \(harness.daemonLog.suffix(1500))")
        }
        let errors = harness.daemonLog.split(separator: "\n").filter { $0.contains("error") && $0.contains("max_user_watches") }
        #expect(errors.count <= mailboxes.count, "one error line per unwatched mailbox, not one per rescan: \(errors.count)")
        #expect(harness.process?.isRunning == true)
    }
}
