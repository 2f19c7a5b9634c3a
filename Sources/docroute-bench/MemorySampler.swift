import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What a process's resident memory is made of at its largest, read from
/// `/proc/<pid>/smaps_rollup` every `interval` on a thread of its own while a phase runs: anonymous
/// memory (heap, stacks: what the daemon itself holds) against file pages (code and read-only
/// data of the binary and the shared libraries, which every Swift program maps alike).
final class MemorySampler: @unchecked Sendable {
    struct Sample: Codable, Sendable {
        /// Resident, MiB (`Rss`).
        var residentMiB: Double = 0
        /// Anonymous, MiB (`Anonymous`).
        var anonymousMiB: Double = 0
        /// File pages, MiB (`Rss` − `Anonymous`).
        var fileMiB: Double = 0
        /// Of the file pages, those other processes map too, MiB (`Shared_Clean`).
        var sharedCleanMiB: Double = 0
    }

    private let pid: pid_t
    private let interval: useconds_t
    private let lock = NSLock()
    private var peak = Sample()
    private var running = true
    private let done = DispatchSemaphore(value: 0)

    /// Starts sampling `pid` every `milliseconds`.
    init(pid: pid_t, milliseconds: UInt32 = 50) {
        self.pid = pid
        interval = milliseconds * 1000
        let thread = Thread { [self] in run() }
        thread.name = "memory-sampler"
        thread.start()
    }

    /// Stops sampling and returns the sample with the most resident memory.
    func stop() -> Sample {
        lock.withLock { running = false }
        done.wait()
        return lock.withLock { peak }
    }

    private func run() {
        defer { done.signal() }
        while lock.withLock({ running }) {
            if let sample = Self.read(pid: pid) {
                lock.withLock { if sample.residentMiB > peak.residentMiB { peak = sample } }
            }
            usleep(interval)
        }
    }

    /// One reading of `/proc/<pid>/smaps_rollup`; nil once the process is gone.
    static func read(pid: pid_t) -> Sample? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/smaps_rollup", encoding: .utf8) else { return nil }
        var fields: [Substring: Double] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ", omittingEmptySubsequences: true)
            guard parts.count == 3, parts[2] == "kB", parts[0].hasSuffix(":"), let kibibytes = Double(parts[1]) else { continue }
            fields[parts[0].dropLast()] = kibibytes / 1024
        }
        guard let resident = fields["Rss"], let anonymous = fields["Anonymous"] else { return nil }
        return Sample(residentMiB: resident, anonymousMiB: anonymous, fileMiB: resident - anonymous,
                      sharedCleanMiB: fields["Shared_Clean"] ?? 0)
    }
}
