import ArgumentParser
import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension DocRouteBench {
    /// docrouted against the script an administrator writes instead, in one run on one disk.
    struct Compare: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "docrouted against bench/baseline/inotify-copy.sh (inotifywait, cp, socat), on the same disk.",
            discussion: """
                Bursts of 4 KiB files renamed into an inbox (docroute: until a subscriber acknowledged the last; \
                the script: until its last line reached the socket, or nothing moved for 5 s), steady latency \
                from rename to openURL, a backlog waiting at start, idle cost. Progress goes to standard error.
                """)
        @Option(name: .customLong("files"), help: "Files per burst; repeat for several bursts (default 10,000 and 100,000; quick: 1,000; 0: none).")
        var bursts: [Int] = []
        @Option(help: "Steady rates in files per second; repeat (default 200 and 1,000).") var rate: [Int] = []
        @Option(help: "Seconds at each steady rate (default 30; quick: 3).") var latencySeconds: Int?
        @Option(help: "Files waiting before the daemon starts (default 100,000; quick: 1,000; 0 skips).") var backlog: Int?
        @Option(help: "Seconds of idleness measured (default 60; quick: 5; 0 skips).") var idleSeconds: Int?
        @Option(help: "The baseline script.") var baselineScript = repositoryRoot + "/bench/baseline/inotify-copy.sh"
        @Option(help: "The admin's durable loop (a second baseline, run with python3).")
        var durableLoop = repositoryRoot + "/bench/baseline/durable-loop.py"
        @Option(help: "Rounds of each burst; each figure is the median (default 1; the README's figures use 3).")
        var rounds = 1
        @Flag(help: "Leave the inotifywait script out of the bursts (at 100,000 files it takes many minutes).")
        var skipScript = false
        @Option(name: .customLong("large-mib"), help: "One file of this many MiB against cp and fsync (default 1,024; quick: 8; 0 skips).")
        var largeMiB: Int?
        @Option(help: "Alternating pairs for the large file; the ratio is the median of the pairs' (default 3; quick: 1).")
        var largePairs: Int?
        @Option(help: "Seconds of sync and rest before each large-file measurement (default 8; quick: 1).")
        var largeSettle: UInt32?
        @Flag(help: "Each side of a burst on an ext4 file system of its own, made for it (root): no side pays for the inodes another freed.")
        var freshFileSystem = false
        @Flag(help: "Short runs (for the smoke test in the suite).") var quick = false
        @Flag(help: "Write the figures as JSON on standard output (the table goes to standard error).") var json = false

        func run() throws {
            GroupedChild.stopAllOnInterrupt()
            if json { BenchOutput.shared.enableJSON() }
            let comparison = try measure()
            try BenchOutput.shared.finish()
            try comparison.requireNothingLost()
        }

        /// Runs every phase and hands the result to ``BenchOutput`` (`all` calls this directly).
        func measure() throws -> Comparison {
            let started = DispatchTime.now().uptimeNanoseconds
            var comparison = Comparison(machine: .init(
                cores: ProcessInfo.processInfo.activeProcessorCount, loadAverageAtStart: Self.loadAverage, quick: quick,
                freshFileSystems: freshFileSystem, startedAt: ISO8601DateFormatter().string(from: Date()), daemon: daemonExecutable))
            // `--files 0` leaves the bursts out (to measure the large file or the latency alone).
            let sizes = bursts.isEmpty ? (quick ? [1_000] : [10_000, 100_000]) : bursts.filter { $0 > 0 }
            for files in sizes {
                var docroute: [Comparison.BurstSide] = []
                var baseline: [Comparison.BurstSide] = []
                // Written for the load of the moment: the burst's figures come with it.
                progress("burst of \(files): load \(Self.loadAverage.map { String(format: "%.2f", $0) }.joined(separator: " "))")
                var diskLine: [(rate: Double, cpu: Double)] = []
                var durable: [(rate: Double, cpu: Double)] = []
                for round in 1...max(1, rounds) {
                    if rounds > 1 { progress("burst of \(files): round \(round) of \(rounds)") }
                    let fresh = freshFileSystem
                    docroute.append(try FreshFileSystem.around(fresh, name: "fs-docroute", files: files) { try docrouteBurst(files: files) })
                    if !skipScript {
                        baseline.append(try FreshFileSystem.around(fresh, name: "fs-script", files: files) { try baselineBurst(files: files) })
                    }
                    diskLine.append(try FreshFileSystem.around(fresh, name: "fs-diskline", files: files) { try diskLineBurst(files: files) })
                    durable.append(try FreshFileSystem.around(fresh, name: "fs-durable", files: files) { try durableLoopBurst(files: files) })
                }
                let d = Self.median(docroute), b = baseline.isEmpty ? nil : Self.median(baseline)
                comparison.bursts.append(.init(files: files, docroute: d, baseline: b,
                                               ratio: b.flatMap { $0.filesPerSecond > 0 ? d.filesPerSecond / $0.filesPerSecond : nil },
                                               diskLine: Self.median(diskLine.map(\.rate)), durableLoop: Self.median(durable.map(\.rate)),
                                               diskLineCPU: Self.median(diskLine.map(\.cpu)), durableLoopCPU: Self.median(durable.map(\.cpu)),
                                               rounds: max(1, rounds)))
            }
            let mebibytes = largeMiB ?? (quick ? 8 : 1024)
            if mebibytes > 0 {
                progress("large file of \(mebibytes) MiB: load \(Self.loadAverage.map { String(format: "%.2f", $0) }.joined(separator: " "))")
                comparison.large = try LargeFileComparison(mebibytes: mebibytes, pairs: largePairs ?? (quick ? 1 : 3),
                                                           settleSeconds: largeSettle ?? (quick ? 1 : 8)).measure()
            }
            let duration = latencySeconds ?? (quick ? 3 : 30)
            for perSecond in rate.isEmpty ? [200, 1_000] : rate where duration > 0 {
                progress("latency: \(perSecond) files/s for \(duration) s")
                comparison.latency.append(try measureSteadyLatency(rate: perSecond, duration: duration, tail: quick ? 20 : 60))
            }
            let waiting = backlog ?? (quick ? 1_000 : 100_000)
            if waiting > 0 { comparison.backlog = try backlogAtStart(files: waiting) }
            let idle = idleSeconds ?? (quick ? 5 : 60)
            if idle > 0 { comparison.idle = try idleCost(seconds: idle) }
            comparison.machine.loadAverageAtEnd = Self.loadAverage
            comparison.machine.minutes = Double(DispatchTime.now().uptimeNanoseconds - started) / 60e9
            BenchOutput.shared.human("docroute against the inotifywait script (\(baselineScript.split(separator: "/").suffix(3).joined(separator: "/"))), "
                + (freshFileSystem ? "each burst side on a fresh ext4 image on the same disk, " : "same disk, ")
                + "\(comparison.machine.cores) cores, load \(comparison.machine.loadAverageAtStart.map { String(format: "%.2f", $0) }.joined(separator: " ")), "
                + String(format: "%.1f minutes", comparison.machine.minutes) + ", daemon \(daemonExecutable)")
            for line in comparison.table { BenchOutput.shared.human(line) }
            BenchOutput.shared.record(comparison)
            return comparison
        }

        static var loadAverage: [Double] {
            var values = [Double](repeating: 0, count: 3)
            return getloadavg(&values, 3) == 3 ? values : []
        }

        /// The real daemon and a subscriber that acknowledges each document as it comes.
        func docrouteBurst(files: Int) throws -> Comparison.BurstSide {
            progress("burst of \(files) for docroute: writing the files")
            let daemon = try BenchDaemon(name: "compare-docroute")
            defer {
                progress("burst of \(files) for docroute: removing the files")
                daemon.stop()
            }
            try daemon.start()
            let subscriber = try AcknowledgingSubscriber(socket: daemon.socket)
            defer { subscriber.close() }
            let names = try daemon.stageFiles(files, size: 4096)
            daemon.syncStaged()
            progress("burst of \(files) for docroute: renaming into the inbox")
            let memory = MemorySampler(pid: daemon.process.processIdentifier)
            let cpuBefore = daemon.cpuSeconds
            let start = DispatchTime.now().uptimeNanoseconds
            let dropper = DispatchGroup()
            dropper.enter()
            Thread {
                for name in names { daemon.dropStaged(name) }
                dropper.leave()
            }.start()
            subscriber.take(until: files, stall: 30) { progress("burst of \(files) for docroute: \($0) acknowledged") }
            dropper.wait()
            let peakMemory = memory.stop()
            let cpu = daemon.cpuSecondsOnceQuiet() - cpuBefore
            let delivered = subscriber.presentIn(daemon.sandbox, size: 4096)
            let seconds = subscriber.lastAt > start ? Double(subscriber.lastAt - start) / 1e9 : 0
            return .init(dropped: files, notified: subscriber.names.count, delivered: delivered, lost: files - delivered,
                         seconds: seconds, filesPerSecond: seconds > 0 ? Double(delivered) / seconds : 0,
                         settled: true,
                         peakResidentMiB: daemon.peakResidentMiB, peakMemory: peakMemory,
                         cpuMicrosecondsPerFile: CPUTime.perFile(cpu, files: files))
        }

        /// The side whose rate is the median (its lost count and memory are the worst of the rounds).
        static func median(_ sides: [Comparison.BurstSide]) -> Comparison.BurstSide {
            var middle = sides.sorted { $0.filesPerSecond < $1.filesPerSecond }[sides.count / 2]
            middle.lost = sides.map(\.lost).max() ?? middle.lost
            middle.peakResidentMiB = sides.compactMap(\.peakResidentMiB).max()
            middle.peakMemory = sides.compactMap(\.peakMemory).max { $0.residentMiB < $1.residentMiB }
            return middle
        }

        static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

        /// The disk's line on the same file system: files staged and flushed first, as for docroute.
        func diskLineBurst(files: Int) throws -> (rate: Double, cpu: Double) {
            progress("burst of \(files) for the disk's line")
            return try withStagedFiles(files, in: "compare-diskline") { stage, copies in
                let cpuBefore = CPUTime.thread
                let seconds = try DiskLineBaseline.run(source: stage, destination: copies)
                let cpu = CPUTime.thread - cpuBefore
                return (seconds > 0 ? Double(files) / seconds : 0, CPUTime.perFile(cpu, files: files))
            }
        }

        /// The admin's durable loop (Python) on the same file system.
        func durableLoopBurst(files: Int) throws -> (rate: Double, cpu: Double) {
            progress("burst of \(files) for the admin's durable loop")
            return try withStagedFiles(files, in: "compare-durable") { stage, copies in
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                process.arguments = ["python3", durableLoop, stage, copies]
                let output = Pipe()
                process.standardOutput = output
                let cpuBefore = CPUTime.children
                try process.run()
                let data = output.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                let cpu = CPUTime.children - cpuBefore
                guard process.terminationStatus == 0,
                      let object = try JSONSerialization.jsonObject(with: data) as? [String: Any],
                      let seconds = object["seconds"] as? Double, let count = object["files"] as? Int, count == files else {
                    throw BenchError("the durable loop failed: \(String(decoding: data, as: UTF8.self))")
                }
                return (seconds > 0 ? Double(files) / seconds : 0, CPUTime.perFile(cpu, files: files))
            }
        }

        /// Runs `body` on `files` files of 4 KiB staged in a scratch folder's `stage` and flushed
        /// to disk, as for docroute, with an empty `copies` beside it; the folder goes afterwards.
        func withStagedFiles<Value>(_ files: Int, in name: String,
                                     _ body: (_ stage: String, _ copies: String) throws -> Value) throws -> Value {
            let root = try freshScratchFolder(name, holding: ["stage", "copies"])
            defer { try? FileManager.default.removeItem(atPath: root) }
            _ = try writeFiles(files, size: 4096, prefix: "f", in: root + "/stage")
            flushDirtyPages()
            return try body(root + "/stage", root + "/copies")
        }

        /// The script, fed the same way; it is done when every line arrived or nothing moved for 5 s.
        func baselineBurst(files: Int) throws -> Comparison.BurstSide {
            progress("burst of \(files) for the script: writing the files")
            let baseline = try InotifyCopyBaseline(name: "compare-script", script: baselineScript)
            defer {
                progress("burst of \(files) for the script: removing the files")
                baseline.remove()
            }
            let names = try writeFiles(files, size: 4096, prefix: "f", in: baseline.stage)
            flushDirtyPages()
            let cpuBefore = CPUTime.children
            try baseline.start()
            progress("burst of \(files) for the script: renaming into the inbox")
            let start = DispatchTime.now().uptimeNanoseconds
            for name in names { rename(baseline.stage + "/" + name, baseline.inbox + "/" + name) }
            let settled = baseline.waitUntilSettled(expected: files, quiet: 5, limit: min(600, max(120, Double(files) / 50))) {
                progress("burst of \(files) for the script: \($0) lines received")
            }
            let (lines, lastAt) = baseline.received
            baseline.stop()
            let cpu = CPUTime.children - cpuBefore
            let delivered = baseline.copied
            let seconds = lastAt > start ? Double(lastAt - start) / 1e9 : 0
            return .init(dropped: files, notified: lines, delivered: delivered, lost: files - delivered, seconds: seconds,
                         filesPerSecond: seconds > 0 ? Double(delivered) / seconds : 0, settled: settled, peakResidentMiB: nil,
                         cpuMicrosecondsPerFile: CPUTime.perFile(cpu, files: files))
        }

        /// Files already waiting when the daemon starts: time to READY=1, then to the last acknowledgement.
        func backlogAtStart(files: Int) throws -> Comparison.Backlog {
            progress("backlog of \(files) at start: writing the files")
            let daemon = try BenchDaemon(name: "compare-backlog")
            defer {
                progress("backlog of \(files) at start: removing the files")
                daemon.stop()
            }
            for name in try daemon.stageFiles(files, size: 4096) { daemon.dropStaged(name) }
            daemon.syncStaged()
            let readiness = try ReadinessSocket(path: daemon.root + "/notify.sock")
            defer { readiness.close() }
            progress("backlog of \(files) at start: starting docrouted")
            let start = DispatchTime.now().uptimeNanoseconds
            try daemon.start(environment: ["NOTIFY_SOCKET": readiness.path], waitForSocket: false)
            guard let readyAt = readiness.waitForReady(timeout: 600, alive: { daemon.process.isRunning }) else {
                throw BenchError("docrouted did not report READY=1 with \(files) files waiting")
            }
            let subscriber = try AcknowledgingSubscriber(socket: daemon.socket)
            defer { subscriber.close() }
            subscriber.take(until: files, stall: 30) { progress("backlog of \(files) at start: \($0) acknowledged") }
            let delivered = subscriber.presentIn(daemon.sandbox, size: 4096)
            let drain = Double(max(subscriber.lastAt, readyAt) - start) / 1e9

            // The script does not look at what is already there; a thousand files show it.
            let waiting = min(files, 1_000)
            let baseline = try InotifyCopyBaseline(name: "compare-script-backlog", script: baselineScript)
            defer { baseline.remove() }
            _ = try writeFiles(waiting, size: 4096, prefix: "f", in: baseline.inbox)
            try baseline.start()
            _ = baseline.waitUntilSettled(expected: waiting, quiet: quick ? 2 : 5, limit: 30) { _ in }
            baseline.stop()
            return .init(files: files, secondsToReady: Double(readyAt - start) / 1e9, secondsToDrain: drain,
                         filesPerSecond: drain > 0 ? Double(delivered) / drain : 0, lost: files - delivered,
                         peakResidentMiB: daemon.peakResidentMiB, baselineWaiting: waiting, baselineDelivered: baseline.copied)
        }

        /// Two daemons side by side, each with a subscribed, idle handler, one started by hand and one
        /// with `NOTIFY_SOCKET` set as under systemd: CPU time and context switches over the same `seconds`.
        func idleCost(seconds: Int) throws -> [Comparison.Idle] {
            progress("idle for \(seconds) s, by hand and with NOTIFY_SOCKET set")
            let plain = try BenchDaemon(name: "compare-idle")
            defer { plain.stop() }
            let managed = try BenchDaemon(name: "compare-idle-notify")
            defer { managed.stop() }
            let readiness = try ReadinessSocket(path: managed.root + "/notify.sock")
            defer { readiness.close() }
            try plain.start()
            try managed.start(environment: ["NOTIFY_SOCKET": readiness.path])
            let subscribers = try [plain, managed].map { try AcknowledgingSubscriber(socket: $0.socket) }
            defer { for subscriber in subscribers { subscriber.close() } }
            sleep(2)
            let meters = [plain.meter, managed.meter]
            let before = meters.map { ($0.cpuSeconds, $0.contextSwitches) }
            let begin = DispatchTime.now().uptimeNanoseconds
            sleep(UInt32(seconds))
            let elapsed = Double(DispatchTime.now().uptimeNanoseconds - begin) / 1e9
            return zip(meters, before).enumerated().map { index, pair in
                let (meter, (cpu, switches)) = pair
                return Comparison.Idle(underServiceManager: index == 1, seconds: elapsed, cpuMilliseconds: (meter.cpuSeconds - cpu) * 1000,
                                       wakeups: ProcessMeter.wakeups(from: switches, to: meter.contextSwitches), threads: meter.threads)
            }
        }
    }
}
