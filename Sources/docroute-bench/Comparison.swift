import Foundation

/// Everything `docroute-bench compare` measured, as `--json` writes it: docrouted against the
/// administrator's inotifywait script, run one after the other on the same disk.
struct Comparison: Codable, Sendable {
    /// Where and when: a ratio from a loaded machine is still a ratio, but say how loaded.
    struct Machine: Codable, Sendable {
        var cores: Int
        var loadAverageAtStart: [Double]
        var loadAverageAtEnd: [Double] = []
        var quick: Bool
        /// Each side of a burst ran on an ext4 made for it (`--fresh-file-system`).
        var freshFileSystems: Bool? = nil
        var startedAt: String
        var minutes: Double = 0
        /// The `docrouted` measured (``daemonExecutable``).
        var daemon: String? = nil
    }

    /// One side of a burst: what was dropped and what came out.
    struct BurstSide: Codable, Sendable {
        var dropped: Int
        /// docroute: acknowledged by the subscriber; the script: lines that reached the socket.
        var notified: Int
        /// docroute: acknowledged and complete in the sandbox; the script: complete copies.
        var delivered: Int
        var lost: Int
        /// From the first rename to the last notification.
        var seconds: Double
        var filesPerSecond: Double
        /// False when the wait hit its limit while files were still moving.
        var settled: Bool
        var peakResidentMiB: Double?
        /// docroute: the largest resident reading during the burst, and what it was made of.
        var peakMemory: MemorySampler.Sample?
        /// CPU time (user + system) per file dropped, in microseconds: docroute's from its
        /// `/proc/<pid>/stat` (utime + stime, every thread) over the burst and until it went
        /// quiet (the reclamation of the sources included); the script's from `getrusage` of
        /// its process tree, waited for.
        var cpuMicrosecondsPerFile: Double? = nil
    }

    struct Burst: Codable, Sendable {
        var files: Int
        var docroute: BurstSide
        /// The script's side; nil when it was left out (`--skip-script`).
        var baseline: BurstSide?
        /// docroute's files per second over the script's (nil when the script delivered nothing).
        var ratio: Double?
        /// The disk's line (``DiskLineBaseline``), files per second, same file system, same run.
        var diskLine: Double?
        /// The admin's durable loop (`bench/baseline/durable-loop.py`), files per second.
        var durableLoop: Double?
        /// The disk's line's CPU per file (its thread's `getrusage`), microseconds.
        var diskLineCPU: Double? = nil
        /// The durable loop's CPU per file (`getrusage` of the child, waited for), microseconds.
        var durableLoopCPU: Double? = nil
        /// How many rounds each figure is the median of.
        var rounds: Int = 1

        /// docroute's rate over the disk's line.
        var ofDiskLine: Double? { diskLine.flatMap { $0 > 0 ? docroute.filesPerSecond / $0 : nil } }
        /// docroute's rate over the admin's durable loop.
        var ofDurableLoop: Double? { durableLoop.flatMap { $0 > 0 ? docroute.filesPerSecond / $0 : nil } }
        /// docroute's CPU per file over the durable loop's.
        var cpuOfDurableLoop: Double? {
            guard let mine = docroute.cpuMicrosecondsPerFile, let loop = durableLoopCPU, loop > 0 else { return nil }
            return mine / loop
        }
    }

    /// Rename into the inbox to the subscriber's reading of the `openURL` line, in milliseconds.
    struct Latency: Codable, Sendable {
        var rate: Int
        var seconds: Int
        var sent: Int
        var received: Int
        var p50: Double
        var p99: Double
        var p999: Double
        var max: Double
    }

    struct Backlog: Codable, Sendable {
        var files: Int
        /// From starting the process to `READY=1` on `NOTIFY_SOCKET` (the scan is done before it).
        var secondsToReady: Double
        /// From starting the process to the subscriber's last acknowledgement.
        var secondsToDrain: Double
        var filesPerSecond: Double
        var lost: Int
        var peakResidentMiB: Double
        var baselineWaiting: Int
        var baselineDelivered: Int
    }

    struct Idle: Codable, Sendable {
        /// With `NOTIFY_SOCKET` set, as under systemd (`Type=notify`), or started by hand.
        var underServiceManager: Bool
        var seconds: Double
        var cpuMilliseconds: Double
        /// Context switches of all the daemon's threads over the period.
        var wakeups: Int
        var threads: Int
    }

    /// One large file against `cp` and `fsync` (``LargeFileComparison``), seconds of each pair.
    struct LargeFile: Codable, Sendable {
        var mebibytes: Int
        /// Seconds of `sync` and rest before each measurement.
        var settleSeconds: Int
        /// `cp` then `fsync(2)` of the copy, one per pair.
        var cpSeconds: [Double]
        /// Rename into the inbox to the `ack` of its `openURL`, one per pair.
        var docrouteSeconds: [Double]

        /// `cp`'s time over docroute's in each pair (above 1: docroute was faster).
        var pairRatios: [Double] { zip(cpSeconds, docrouteSeconds).map { $1 > 0 ? $0 / $1 : 0 } }
        /// The median of the pairs' ratios: each pair ran under the same load, one right after the other.
        var ratio: Double { DocRouteBench.Compare.median(pairRatios) }
        var cpMedian: Double { DocRouteBench.Compare.median(cpSeconds) }
        var docrouteMedian: Double { DocRouteBench.Compare.median(docrouteSeconds) }

        enum CodingKeys: String, CodingKey { case mebibytes, settleSeconds, cpSeconds, docrouteSeconds, pairRatios, ratio }

        init(mebibytes: Int, settleSeconds: Int, cpSeconds: [Double], docrouteSeconds: [Double]) {
            self.mebibytes = mebibytes
            self.settleSeconds = settleSeconds
            self.cpSeconds = cpSeconds
            self.docrouteSeconds = docrouteSeconds
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            mebibytes = try container.decode(Int.self, forKey: .mebibytes)
            settleSeconds = try container.decode(Int.self, forKey: .settleSeconds)
            cpSeconds = try container.decode([Double].self, forKey: .cpSeconds)
            docrouteSeconds = try container.decode([Double].self, forKey: .docrouteSeconds)
        }

        /// The measurements and, for the reader of the JSON, the ratios derived from them.
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(mebibytes, forKey: .mebibytes)
            try container.encode(settleSeconds, forKey: .settleSeconds)
            try container.encode(cpSeconds, forKey: .cpSeconds)
            try container.encode(docrouteSeconds, forKey: .docrouteSeconds)
            try container.encode(pairRatios, forKey: .pairRatios)
            try container.encode(ratio, forKey: .ratio)
        }
    }

    var machine: Machine
    var bursts: [Burst] = []
    var large: LargeFile?
    var latency: [Latency] = []
    var backlog: Backlog?
    var idle: [Idle] = []

    /// Lost files are the one figure that must hold on any machine, loaded or not.
    func requireNothingLost() throws {
        for burst in bursts where burst.docroute.lost > 0 {
            throw BenchError("docroute lost \(burst.docroute.lost) of \(burst.files) files in a burst")
        }
        if let lost = backlog?.lost, lost > 0 { throw BenchError("docroute lost \(lost) of the \(backlog?.files ?? 0) files waiting at start") }
    }
}
