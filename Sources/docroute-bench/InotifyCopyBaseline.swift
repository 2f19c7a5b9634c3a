import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The administrator's script (`bench/baseline/inotify-copy.sh`) on a temporary tree beside the
/// daemon's, with the Unix socket it notifies owned by the benchmark.
final class InotifyCopyBaseline: @unchecked Sendable {
    let root: String
    let stage: String
    let inbox: String
    let copies: String
    let script: String
    private var listener: LineCountingListener?
    private var child: GroupedChild?

    init(name: String, script: String) throws {
        root = try freshScratchFolder(name, holding: ["stage", "drop", "copies"])
        stage = root + "/stage"
        inbox = root + "/drop"
        copies = root + "/copies"
        self.script = script
        guard FileManager.default.isExecutableFile(atPath: script) else {
            throw BenchError("the baseline script \(script) is missing or not executable; run from the repository or pass --baseline-script")
        }
        for tool in ["inotifywait", "socat"] where !Self.onPath(tool) {
            throw BenchError("\(tool) is not installed; `make deps` installs inotify-tools and socat")
        }
    }

    static func onPath(_ tool: String) -> Bool {
        (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").contains {
            FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)")
        }
    }

    /// Starts the listener and the script; returns once inotifywait has its watch in place.
    func start() throws {
        let listener = try LineCountingListener(path: root + "/notify.sock")
        self.listener = listener
        let child = try GroupedChild(["/bin/sh", script, inbox, copies, listener.path])
        self.child = child
        guard child.waitForStandardError(containing: "Watches established", timeout: 15) else {
            throw BenchError("the baseline script did not start: \(child.standardError)")
        }
    }

    var received: (lines: Int, lastAt: UInt64) { listener?.received ?? (0, 0) }

    /// Complete copies in the target folder.
    var copied: Int { countFiles(in: copies, size: 4096) }

    /// Waits until `expected` lines arrived, or nothing moved for `quiet` seconds, or `limit` seconds passed.
    /// - Returns: whether it settled (all arrived or went quiet) rather than hit the limit.
    func waitUntilSettled(expected: Int, quiet: Double, limit: Double, progress: (Int) -> Void) -> Bool {
        let start = DispatchTime.now().uptimeNanoseconds
        var lastCount = -1
        var lastChange = start
        var lastReport = start
        while true {
            let now = DispatchTime.now().uptimeNanoseconds
            let count = received.lines
            if count >= expected { return true }
            if count != lastCount {
                lastCount = count
                lastChange = now
            } else if Double(now - lastChange) / 1e9 >= quiet {
                return true
            }
            if Double(now - start) / 1e9 >= limit { return false }
            if now - lastReport > 5_000_000_000 {
                progress(count)
                lastReport = now
            }
            usleep(50_000)
        }
    }

    func stop() {
        child?.stop()
        child = nil
        listener?.stop()
        listener = nil
    }

    func remove() {
        stop()
        try? FileManager.default.removeItem(atPath: root)
    }
}
