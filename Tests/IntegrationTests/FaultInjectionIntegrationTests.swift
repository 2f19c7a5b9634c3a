import DocRouteTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The real daemon under injected I/O faults (docs/TESTING.md): strace failing system calls of one
/// kind, libfiu failing random ones, and docroute's own fault point (`DOCROUTE_FAULT`) failing the
/// Nth call of a kind. After each, a daemon without faults must deliver everything exactly once,
/// and no handler may ever have been told of a file that is missing or incomplete.
///
/// `make test` runs the short forms; `make chaos` sets the variables below for the long ones.
@Suite(.serialized) struct FaultInjectionIntegrationTests {
    // MARK: Every flush fails

    /// Every `fsync`, `fdatasync` and `syncfs` fails with EIO: nothing may count as delivered, so
    /// no handler hears of anything, no copy has a real name, every source stays in its inbox;
    /// and once the fault is gone (the daemon restarted without it), each file arrives exactly once.
    @Test func failingFlushesDeliverNothingThenEverythingExactlyOnce() throws {
        try FaultScenario.requireTool(FaultScenario.strace, package: "strace")
        let scenario = try FaultScenario()
        defer { scenario.finish() }
        let harness = scenario.harness
        var generator = SplitMix(seed: 0x5EED_F10C)
        let files = FaultScenario.setting("DOCROUTE_FAULT_FLUSH_FILES", default: 6)
        let straceLog = harness.root + "/strace.log"
        // The disk fails under a running daemon: one started with every flush failing does not
        // get past opening its ledger (SQLite cannot commit), and exits saying so.
        try harness.start()
        let tracer = try scenario.attachStrace(["fsync", "fdatasync", "syncfs"], error: "EIO", log: straceLog)
        defer { if tracer.isRunning { kill(tracer.processIdentifier, SIGKILL) } }
        try scenario.drop(files, tag: "flush", generator: &generator, largeEvery: 3)
        // Each file's delivery fails, and fails again when it is tried again (backoff 1 s).
        let failedTwice = harness.waitUntil(timeout: 30) {
            let failures = harness.daemonLog.split(separator: "\n").filter { $0.contains("delivery failed; will try again") }
            return scenario.documents.keys.allSatisfy { name in failures.count { $0.contains("path=\(harness.inbox)/\(name) ") } >= 2 }
        }
        #expect(failedTwice, "deliveries fail while every flush fails: \(harness.daemonLog.suffix(3000))")
        let straceText = (try? String(contentsOfFile: straceLog, encoding: .utf8)) ?? ""
        #expect(straceText.contains("(INJECTED)"), "strace failed flushes: \(straceText.suffix(800))")

        let faulty = scenario.handler.snapshot
        #expect(faulty.announcements.isEmpty, "no handler is told of a delivery that was never made durable: \(faulty.announcements)")
        let sandboxNames = (try? FileManager.default.contentsOfDirectory(atPath: scenario.sandbox)) ?? []
        #expect(sandboxNames.allSatisfy { $0.hasPrefix(".") }, "no copy under a real name: \(sandboxNames)")
        for (name, bytes) in scenario.documents {
            #expect(FileManager.default.contents(atPath: harness.inbox + "/" + name) == Data(bytes), "\(name) stays in its inbox, untouched")
        }
        #expect(harness.stop(timeout: 30), "a clean stop while flushes fail: \(harness.daemonLog.suffix(2000))")

        // The fault is gone: everything arrives, once, byte for byte.
        try harness.start()
        #expect(scenario.waitUntilSettled(), "\(harness.daemonLog.suffix(3000))")
        #expect(scenario.sandboxContents == scenario.documents.mapValues { Data($0) }, "each file once, byte for byte, under its own name")
        let temporaries = ((try? FileManager.default.contentsOfDirectory(atPath: scenario.sandbox)) ?? []).filter { $0.hasPrefix(".") }
        #expect(temporaries.isEmpty, "the failed attempts' temporaries are gone: \(temporaries)")
        harness.stop(timeout: 30)
        scenario.check("after the flush faults")
    }

    // MARK: Random faults of one kind, a restart after each

    /// What a round of ``faultsOfOneKindAtRandomThenARestartLoseAndDoubleNothing()`` fails.
    enum CallGroup: String, CaseIterable {
        case flush, rename, unlink, open

        var syscalls: [String] {
            switch self {
            case .flush: ["fsync", "fdatasync", "syncfs"]
            case .rename: ["rename", "renameat", "renameat2"]
            case .unlink: ["unlink", "unlinkat", "rmdir"]
            case .open: ["open", "openat", "openat2"]
            }
        }

        /// Errors the kernel really gives for these calls when a disk or a file system fails.
        var errors: [String] {
            switch self {
            case .flush: ["EIO", "ENOSPC", "EDQUOT"]
            case .rename: ["EIO", "ENOSPC", "EDQUOT", "EROFS"]
            case .unlink: ["EIO", "EROFS", "EBUSY"]
            case .open: ["EIO", "ENOSPC", "EMFILE", "ENFILE", "ENOMEM"]
            }
        }

        /// Whether a fault may start with the daemon: opens may not, as the dynamic loader's
        /// opening of the shared libraries counts (some 95 in the main thread), so the start would
        /// fail before docrouted's own code runs, every time.
        var mayStartWithTheDaemon: Bool { self != .open }
    }

    /// K rounds (DOCROUTE_FAULT_ROUNDS, seeded by DOCROUTE_FAULT_SEED, printed): a daemon under
    /// strace failing one kind of call (flushes, renames, unlinks or opens) from a random
    /// invocation on, or for a random stretch, with a random errno; files dropped before and
    /// while it runs; then killed or stopped, started again without faults, and the whole history
    /// checked. The short form (`make test`) runs three rounds of a few files.
    @Test func faultsOfOneKindAtRandomThenARestartLoseAndDoubleNothing() throws {
        try FaultScenario.requireTool(FaultScenario.strace, package: "strace")
        let rounds = FaultScenario.setting("DOCROUTE_FAULT_ROUNDS", default: 3)
        let filesPerRound = FaultScenario.setting("DOCROUTE_FAULT_ROUND_FILES", default: 4)
        var generator = SplitMix(seed: FaultScenario.seed("DOCROUTE_FAULT_SEED"))
        let scenario = try FaultScenario()
        defer { scenario.finish() }
        let harness = scenario.harness
        var injected = 0
        for round in 1...rounds {
            let group = CallGroup.allCases[Int(generator.next() % UInt64(CallGroup.allCases.count))]
            let error = group.errors[Int(generator.next() % UInt64(group.errors.count))]
            // Mostly the disk fails under a running daemon (strace attached, counting each
            // thread's calls from then); at times from its start (the fault may stop the start).
            let attach = generator.next() % 4 != 0 || !group.mayStartWithTheDaemon
            let first = 1 + generator.next() % (attach ? 6 : 8)
            let when = generator.next() % 2 == 0 ? "\(first)+" : "\(first)..\(first + 1 + generator.next() % 20)"
            let crash = generator.next() % 2 == 0
            let straceLog = harness.root + "/strace-\(round).log"
            let context = "round \(round): \(group.rawValue) \(error) when=\(when) \(attach ? "attached while running" : "from the start"), then \(crash ? "killed" : "stopped")"
            scenario.note(context)
            try scenario.drop(filesPerRound / 2, tag: "r\(round)", generator: &generator, largeEvery: 5)
            var tracer: Process?
            let started: Bool
            if attach {
                try harness.start()
                tracer = try scenario.attachStrace(group.syscalls, error: error, when: when, log: straceLog)
                started = true
            } else {
                started = scenario.startAllowingFailure(
                    wrapper: FaultScenario.straceInjecting(group.syscalls, error: error, when: when, log: straceLog))
            }
            try scenario.drop(filesPerRound - filesPerRound / 2, tag: "r\(round)", generator: &generator, largeEvery: 5)
            let injectedYet = { ((try? String(contentsOfFile: straceLog, encoding: .utf8)) ?? "").contains("(INJECTED)") }
            if started {
                // A random while under the fault, and on (two more files every half second, up to
                // 10 s more) until strace failed a call: a round must test something.
                let lasting = Double(generator.next() % 3000) / 1000 + 0.3
                let began = Date()
                while Date().timeIntervalSince(began) < lasting || (!injectedYet() && Date().timeIntervalSince(began) < lasting + 10) {
                    if scenario.waitUntilSettled(timeout: 0.5) && !injectedYet() && harness.isRunning {
                        try scenario.drop(2, tag: "r\(round)", generator: &generator, largeEvery: 5)
                    }
                }
                if crash { harness.crash() } else { harness.stop(timeout: 30) }
            }
            if let tracer {
                // strace ends with the daemon it traces.
                if !harness.waitUntil(timeout: 10, { !tracer.isRunning }) { kill(tracer.processIdentifier, SIGKILL) }
                tracer.waitUntilExit()
            }
            if injectedYet() { injected += 1 } else { scenario.note("round \(round): strace failed no call") }
            #expect(scenario.recoverWithoutFaults(), "\(context): \(scenario.notes.last ?? "")")
            scenario.check(context)
        }
        #expect(injected > 0, "no round's fault was ever injected: the test tested nothing")
    }

    // MARK: libfiu: random faults in every kind of I/O call

    /// Random EIO or ENOSPC, and short reads and writes, in every POSIX I/O call the daemon makes
    /// through the C library (libfiu's `posix/io/*`, SQLite's and SwiftNIO's calls included, with
    /// probability DOCROUTE_FIU_PROBABILITY), switched on once the daemon runs: no announcement may
    /// name a missing or incomplete file, and after a restart without faults everything arrives
    /// exactly once.
    ///
    /// The faults start once the daemon is ready, not with it: at start they hit the reading of the
    /// handler manifests, and a handler whose manifest could not be read is left out, its documents
    /// quarantined (``aManifestUnreadableAtStartDoesNotQuarantineItsDocuments()``).
    @Test func randomLibfiuFaultsNeverAnnounceAMissingOrIncompleteFile() throws {
        try FaultScenario.requireTool(FaultScenario.fiuRun, package: "fiu-utils")
        let rounds = FaultScenario.setting("DOCROUTE_FIU_ROUNDS", default: 1)
        let files = FaultScenario.setting("DOCROUTE_FIU_FILES", default: 6)
        let seconds = FaultScenario.setting("DOCROUTE_FIU_SECONDS", default: 3)
        let probability = ProcessInfo.processInfo.environment["DOCROUTE_FIU_PROBABILITY"] ?? "0.03"
        var generator = SplitMix(seed: FaultScenario.seed("DOCROUTE_FIU_SEED"))
        let scenario = try FaultScenario()
        defer { scenario.finish() }
        let harness = scenario.harness
        let control = harness.root + "/fiu"
        var faulted = 0
        for round in 1...rounds {
            // libfiu's own generator is seeded from the clock; this seed fixes the errno, the files
            // and the timing. `failinfo` gives the errno: libfiu's own pick, from everything its
            // function may return, includes errnos no disk fault gives (EINVAL from read, which
            // SwiftNIO takes for a bug and stops the process on; ELOOP from open, which means a
            // symbolic link, and quarantines the file).
            let (errorName, errorNumber) = generator.next() % 2 == 0 ? ("EIO", EIO) : ("ENOSPC", ENOSPC)
            let enable = "enable_random name=posix/io/*,probability=\(probability),failinfo=\(errorNumber)"
            let context = "libfiu round \(round): \(errorName) and short reads and writes, probability \(probability), \(files) files, \(seconds) s"
            scenario.note(context)
            try scenario.drop(files / 2, tag: "fiu\(round)", generator: &generator, largeEvery: 4)
            try harness.start(shell: [FaultScenario.fiuRun, "-x", "-f", control])
            try scenario.fiuControl(enable, path: control)
            try scenario.drop(files - files / 2, tag: "fiu\(round)", generator: &generator, largeEvery: 4)
            // At least `seconds` under the faults, and on (more files every half second, up to 20 s
            // more) until the daemon logged a call they failed: a round must test something.
            let faultText = String(cString: strerror(errorNumber))
            let faultLogged = { harness.daemonLog.contains(faultText) || harness.daemonLog.contains("Program crashed") || !harness.isRunning }
            let started = Date()
            while Date().timeIntervalSince(started) < Double(seconds) || (!faultLogged() && Date().timeIntervalSince(started) < Double(seconds) + 20) {
                if scenario.waitUntilSettled(timeout: 0.5) && !faultLogged() && harness.isRunning {
                    try scenario.drop(2, tag: "fiu\(round)", generator: &generator, largeEvery: 4)
                }
            }
            if faultLogged() { faulted += 1 }
            if generator.next() % 2 == 0 { harness.crash() } else { harness.stop(timeout: 30) }
            for announcement in scenario.handler.snapshot.announcements {
                let expected = scenario.documents[announcement.originalFilename].map { DeliveryHistory.sha256($0) }
                #expect(announcement.observedSHA256 != nil && announcement.observedSHA256 == expected,
                        "\(context): \(announcement.type) named \(announcement.path), missing or incomplete")
            }
            #expect(scenario.recoverWithoutFaults(), "\(context): \(scenario.notes.last ?? "")")
            scenario.check(context)
        }
        #expect(faulted > 0, "no round logged a failed call: libfiu injected nothing the daemon saw")
    }

    /// One EIO when the daemon opens a handler's manifest at start (strace, only on that file):
    /// the handler is left out until a reload, and a document for it should wait in its inbox, not
    /// be quarantined as a type nobody claims (its type is declared in the missing manifest). A
    /// known issue, kept here as it stands: remove `withKnownIssue` when the daemon keeps such a
    /// document back.
    @Test func aManifestUnreadableAtStartDoesNotQuarantineItsDocuments() throws {
        try FaultScenario.requireTool(FaultScenario.strace, package: "strace")
        let scenario = try FaultScenario()
        defer { scenario.finish() }
        let harness = scenario.harness
        let manifest = harness.handlers + "/molecules.plist"
        var generator = SplitMix(seed: 0xC0FFEE)
        try harness.start(wrapper: [FaultScenario.strace, "-f", "-qq", "-o", harness.root + "/strace.log", "-P", manifest,
                                    "-e", "trace=open,openat", "-e", "inject=open,openat:error=EIO"])
        #expect(harness.daemonLog.contains("handler manifest not loaded"), "the fault hit the manifest: \(harness.daemonLog.suffix(2000))")
        try scenario.drop(1, tag: "manifest", generator: &generator)
        let name = try #require(scenario.documents.keys.first)
        // Routed (and quarantined, as it stands) within a second or two.
        _ = harness.waitUntil(timeout: 5) { scenario.inboxIsEmpty || FileManager.default.fileExists(atPath: harness.quarantine + "/Inbox/" + name) }
        withKnownIssue("a handler whose manifest could not be read at start has its documents quarantined") {
            #expect(!FileManager.default.fileExists(atPath: harness.quarantine + "/Inbox/" + name), "\(name) is quarantined")
            #expect(FileManager.default.fileExists(atPath: harness.inbox + "/" + name), "\(name) waits in its inbox")
        }
    }

    // MARK: The Nth call of a kind fails (DOCROUTE_FAULT)

    /// docroute's own fault point, as SQLite's I/O-error tests sweep theirs: for N = 1, 2, ... the
    /// daemon starts with `DOCROUTE_FAULT=<kind>:N:EIO` (only the Nth call of that kind through
    /// DocRoutePlatform fails) on a burst of files, is stopped, started again without the fault,
    /// and the history checked; the sweep ends at DOCROUTE_FAULT_SWEEP_LIMIT or at the first N the
    /// daemon never reaches. DOCROUTE_FAULT_SWEEP_KINDS picks the kinds (`make test`: fsync and
    /// rename, N up to 5; `make chaos`: all, to the end).
    @Test func theNthCallOfEachKindFailingLosesAndDoublesNothing() throws {
        let kinds = (ProcessInfo.processInfo.environment["DOCROUTE_FAULT_SWEEP_KINDS"] ?? "fsync,rename").split(separator: ",").map(String.init)
        let limit = FaultScenario.setting("DOCROUTE_FAULT_SWEEP_LIMIT", default: 5)
        let burst = FaultScenario.setting("DOCROUTE_FAULT_SWEEP_FILES", default: 4)
        for kind in kinds {
            var generator = SplitMix(seed: UInt64(kind.utf8.reduce(0) { $0 &* 31 &+ Int($1) }))
            let scenario = try FaultScenario()
            defer { scenario.finish() }
            let harness = scenario.harness
            var fired = 0
            var reachedTheEnd = false
            for n in 1...limit {
                let fault = "\(kind):\(n):EIO"
                try scenario.drop(burst / 2, tag: "\(kind)\(n)", generator: &generator, largeEvery: 3)
                if scenario.startAllowingFailure(environment: ["DOCROUTE_FAULT": fault]) {
                    try scenario.drop(burst - burst / 2, tag: "\(kind)\(n)", generator: &generator, largeEvery: 3)
                    // Delivered (a failed one is tried again after 1 s) and the sources freed, so
                    // every call the burst makes has been counted.
                    _ = harness.waitUntil(timeout: 4) {
                        scenario.handler.everyDropAcknowledged && scenario.inboxIsEmpty
                            && ((try? FileManager.default.contentsOfDirectory(atPath: harness.root + "/state/reclaim")) ?? []).isEmpty
                    }
                    harness.stop(timeout: 30)
                } else {
                    try scenario.drop(burst - burst / 2, tag: "\(kind)\(n)", generator: &generator, largeEvery: 3)
                }
                let hit = harness.daemonLog.contains("DOCROUTE_FAULT: \(kind) call \(n) failed")
                scenario.note("DOCROUTE_FAULT=\(fault): \(hit ? "failed that call" : "never reached it")")
                #expect(scenario.recoverWithoutFaults(), "DOCROUTE_FAULT=\(fault): \(scenario.notes.last ?? "")")
                scenario.check("DOCROUTE_FAULT=\(fault)")
                if hit { fired += 1 } else {
                    reachedTheEnd = true
                    break
                }
            }
            #expect(fired > 0, "\(kind): the fault point never fired")
            if reachedTheEnd { scenario.note("\(kind): the sweep reached past the last call at N = \(fired + 1)") }
        }
    }

    /// A `DOCROUTE_FAULT` that cannot be read stops the process before it does anything, saying
    /// what it expects: a mistyped setting must not leave a fault test running without its fault.
    @Test(arguments: ["fsync:0:EIO", "sync:1:EIO", "fsync:1:EWHAT", "fsync:1", "rename:2+:EIO,unlink:x:EIO"])
    func anUnreadableFaultSettingStopsTheDaemon(_ setting: String) throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: DaemonHarness.binDirectory + "/docrouted")
        process.arguments = ["--config", harness.configPath]
        process.environment = ProcessInfo.processInfo.environment.merging(["DOCROUTE_FAULT": setting]) { $1 }
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        process.waitUntilExit()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 2)
        #expect(text.contains("DOCROUTE_FAULT: cannot read \"\(setting)\"; expected KIND:N:ERRNO or KIND:N+:ERRNO"), "\(text)")
        #expect(!FileManager.default.fileExists(atPath: harness.root + "/state"), "it stopped before touching anything")
    }
}
