import DocRouteTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// One fault test's tree, subscribed handler and history: files are dropped through it, daemons
/// with and without faults are started on it, and ``check(_:sourceLocation:)`` holds the history to
/// docroute's promises (``DeliveryHistory/violations()``).
final class FaultScenario: @unchecked Sendable {
    static let molecules = "com.sunsetlakesoftware.molecules"
    static let strace = "/usr/bin/strace"
    static let fiuRun = "/usr/bin/fiu-run"

    let harness: DaemonHarness
    let handler: HistoryHandler
    /// Every document dropped, by name.
    private(set) var documents: [String: [UInt8]] = [:]
    /// What each round did, for failure messages.
    private(set) var notes: [String] = []
    private var serial = 0

    init() throws {
        harness = try DaemonHarness()
        handler = HistoryHandler(socket: harness.socket, bundleIdentifier: Self.molecules)
        handler.start()
    }

    func finish() {
        harness.crash()
        _ = handler.stop()
        harness.remove()
    }

    var sandbox: String { harness.sandbox(Self.molecules) }

    func note(_ text: String) {
        notes.append(text)
        print("fault test: \(text)")
    }

    /// Fails the test (never skips it) when a tool the fault tests run is missing.
    static func requireTool(_ path: String, package: String) throws {
        try #require(FileManager.default.isExecutableFile(atPath: path),
                     "\(path) is missing: install the Debian package \(package) (`make deps` does)")
    }

    /// The command line that runs the daemon under strace, failing the calls in `syscalls` with
    /// `error` (at the invocations `when` names, per thread, or every one). strace tampers only
    /// with calls it traces, so the set is traced too; `--seccomp-bpf` stops the daemon only at those.
    static func straceInjecting(_ syscalls: [String], error: String, when: String? = nil, log: String, attaching: Bool = false) -> [String] {
        let set = syscalls.joined(separator: ",")
        // strace refuses the seccomp filter for a process it attaches to.
        return [strace, "-f", "-qq"] + (attaching ? [] : ["--seccomp-bpf"]) + ["-o", log, "-e", "trace=\(set)",
                "-e", "inject=\(set):error=\(error)" + (when.map { ":when=\($0)" } ?? "")]
    }

    /// Attaches strace to the running daemon, every thread of it (and any it starts), failing
    /// the calls in `syscalls` as ``straceInjecting(_:error:when:log:)`` says, from now on (a
    /// `when` counts each thread's calls from the attach): the disk fails under a daemon that is
    /// running. Returns once every thread is traced; the fault lasts until the daemon exits.
    func attachStrace(_ syscalls: [String], error: String, when: String? = nil, log: String) throws -> Process {
        let pid = try #require(harness.daemonProcessID, "no daemon to attach strace to")
        let process = Process()
        let command = Self.straceInjecting(syscalls, error: error, when: when, log: log, attaching: true)
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst()) + ["-p", "\(pid)"]
        try process.run()
        let tracer = "\(process.processIdentifier)"
        let traced = harness.waitUntil(timeout: 10) {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
            return !tasks.isEmpty && tasks.allSatisfy { task in
                let status = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)) ?? ""
                return status.split(separator: "\n").contains { $0.hasPrefix("TracerPid:") && $0.hasSuffix(tracer) }
            }
        }
        try #require(traced, "strace did not attach to every thread of the daemon within 10 s")
        return process
    }

    /// Sends a libfiu remote-control command (`enable_random name=...,probability=...`) to the
    /// daemon started under `fiu-run -x -f <path>`, through fiu-ctrl.
    func fiuControl(_ command: String, path: String) throws {
        let pid = try #require(harness.daemonProcessID, "no daemon to send \(command) to")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/fiu-ctrl")
        process.arguments = ["-f", path, "-c", command, "\(pid)"]
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "fiu-ctrl \(command) exited with \(process.terminationStatus)")
    }

    /// Drops `count` new documents (unique bytes, names `<tag>-<n>.pdb`), each as a careful sender
    /// does; `largeEvery` makes every so many a 1.5 MiB one (copied with copy_file_range and synced
    /// on its own). Returns their names.
    @discardableResult
    func drop(_ count: Int, tag: String, generator: inout SplitMix, largeEvery: Int = 0) throws -> [String] {
        var names: [String] = []
        for _ in 0..<count {
            serial += 1
            let name = "\(tag)-\(serial).pdb"
            var bytes = Array("HEADER    FAULT \(name)\n".utf8) + DeliveryIntegrationTests.pdb
            let large = largeEvery > 0 && serial % largeEvery == 0
            let tail = large ? 3 << 19 : Int(generator.next() % 4000)
            var line: [UInt8] = []
            for index in 0..<tail {
                line.append(index % 64 == 63 ? 0x0A : UInt8(0x41 + generator.next() % 26))
            }
            bytes += Array("REMARK ".utf8) + line + [0x0A]
            documents[name] = bytes
            handler.dropped(name, bytes: bytes)
            try harness.drop(name, bytes)
            names.append(name)
        }
        return names
    }

    /// Starts a daemon that may fail to start (a fault hit its start): `false` then, the
    /// process gone, and the reason noted.
    func startAllowingFailure(environment: [String: String] = [:], shell: [String]? = nil, wrapper: [String]? = nil) -> Bool {
        do {
            try harness.start(environment: environment, shell: shell, wrapper: wrapper)
            return true
        } catch {
            note("the daemon did not start under the fault: \(String(describing: error).suffix(400))")
            harness.crash()
            return false
        }
    }

    /// Whether the inbox holds no file.
    var inboxIsEmpty: Bool {
        guard let walker = FileManager.default.enumerator(atPath: harness.inbox) else { return false }
        while let entry = walker.nextObject() as? String {
            var info = stat()
            if lstat(harness.inbox + "/" + entry, &info) == 0, (info.st_mode & S_IFMT) != S_IFDIR { return false }
        }
        return true
    }

    /// Waits until every document dropped so far was announced intact and acknowledged and the
    /// inbox is empty (a daemon without faults running); `false` after `timeout` seconds.
    func waitUntilSettled(timeout: TimeInterval = 60) -> Bool {
        harness.waitUntil(timeout: timeout) { self.handler.everyDropAcknowledged && self.inboxIsEmpty }
    }

    /// Starts the daemon without faults, waits until everything dropped is delivered and
    /// acknowledged, then stops it cleanly; `false` (with the log noted) if it did not settle.
    @discardableResult
    func recoverWithoutFaults(timeout: TimeInterval = 60) -> Bool {
        do {
            try harness.start()
        } catch {
            note("the daemon did not start again without faults: \(error)")
            return false
        }
        let settled = waitUntilSettled(timeout: timeout)
        if !settled { note("not settled \(Int(timeout)) s after the restart without faults:\n\(harness.daemonLog.suffix(3000))") }
        // The ledger's last acknowledgements are written by the time a clean stop returns.
        harness.stop(timeout: 30)
        return settled
    }

    /// Holds the history so far to every promise; `context` says which round or N it was.
    func check(_ context: String, sourceLocation: SourceLocation = #_sourceLocation) {
        handler.noteEnd(sandbox: sandbox, inbox: harness.inbox, quarantine: harness.quarantine)
        let history = handler.snapshot
        let problems = history.violations()
        #expect(problems.isEmpty, "\(context): \(problems.joined(separator: "\n"))\n\(history.summary)\n\(notes.suffix(6).joined(separator: "\n"))",
                sourceLocation: sourceLocation)
    }

    /// The real names in the sandbox with their bytes.
    var sandboxContents: [String: Data] {
        var found: [String: Data] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: sandbox)) ?? [] where !name.hasPrefix(".") {
            found[name] = FileManager.default.contents(atPath: sandbox + "/" + name)
        }
        return found
    }

    /// A seed from `variable` if set (to replay a run), otherwise a fresh one; printed either way.
    static func seed(_ variable: String) -> UInt64 {
        let seed = ProcessInfo.processInfo.environment[variable].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64(UInt32.max))
        print("fault test: seed \(seed) (replay with \(variable)=\(seed))")
        return seed
    }

    static func setting(_ variable: String, default value: Int) -> Int {
        ProcessInfo.processInfo.environment[variable].flatMap { Int($0) } ?? value
    }
}
