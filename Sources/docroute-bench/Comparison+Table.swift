import Foundation

extension Comparison {
    /// The table people read: one row per figure, docroute beside the script, the issue's target last.
    var table: [String] {
        var rows: [[String]] = [["", "docroute", "inotifywait script", "ratio", "target"]]
        for burst in bursts {
            let d = burst.docroute
            let b = burst.baseline
            rows.append(["burst \(Self.count(burst.files)) × 4 KiB: files/s" + (burst.rounds > 1 ? " (median of \(burst.rounds))" : ""),
                         Self.count(d.filesPerSecond), b.map { Self.count($0.filesPerSecond) } ?? "(not run)",
                         burst.ratio.map { String(format: "%.1f×", $0) } ?? "–", "≥ 20×"])
            if let line = burst.diskLine {
                rows.append(["  the disk's line (copy, syncfs/256, rename): files/s", "", Self.count(line),
                             burst.ofDiskLine.map { String(format: "%.2f×", $0) } ?? "–", "≥ 0.8×"])
            }
            if let loop = burst.durableLoop {
                rows.append(["  the admin's durable loop (Python): files/s", "", Self.count(loop),
                             burst.ofDurableLoop.map { String(format: "%.2f×", $0) } ?? "–", "≥ 1.5×"])
            }
            if let mine = d.cpuMicrosecondsPerFile {
                rows.append(["  CPU per file (user + system), µs", Self.decimal(mine), b?.cpuMicrosecondsPerFile.map(Self.decimal) ?? "", "", ""])
            }
            if let line = burst.diskLineCPU {
                rows.append(["  the disk's line: CPU per file, µs", "", Self.decimal(line), "", ""])
            }
            if let loop = burst.durableLoopCPU {
                rows.append(["  the admin's durable loop: CPU per file, µs", "", Self.decimal(loop),
                             burst.cpuOfDurableLoop.map { String(format: "%.2f×", $0) } ?? "–", "≤ 2×"])
            }
            rows.append(["  seconds to the last notification", Self.decimal(d.seconds) + (d.settled ? "" : " (cut)"),
                         b.map { Self.decimal($0.seconds) + ($0.settled ? "" : " (cut)") } ?? "", "", ""])
            rows.append(["  delivered / notified", "\(Self.count(d.delivered)) / \(Self.count(d.notified))",
                         b.map { "\(Self.count($0.delivered)) / \(Self.count($0.notified))" } ?? "", "", ""])
            // A wait cut by its limit leaves files that may still have been on their way.
            func lost(_ side: BurstSide) -> String { Self.count(side.lost) + (side.settled ? "" : " (or still queued)") }
            rows.append(["  lost", lost(d), b.map(lost) ?? "", "", "0"])
            if let peak = d.peakResidentMiB {
                rows.append(["  daemon peak resident memory (VmHWM)", Self.decimal(peak) + " MiB", "", "", "< 48 MiB"])
            }
            if let memory = d.peakMemory {
                rows.append(["  at the largest reading: anonymous / file pages (shared)",
                             "\(Self.decimal(memory.anonymousMiB)) / \(Self.decimal(memory.fileMiB)) (\(Self.decimal(memory.sharedCleanMiB))) MiB", "", "", ""])
            }
        }
        if let large {
            rows.append(["one \(large.mebibytes) MiB file until durable (docroute: acknowledged; cp: then fsync), s" + (large.cpSeconds.count > 1 ? " (median)" : ""),
                         Self.decimal(large.docrouteMedian), Self.decimal(large.cpMedian) + " (cp)",
                         String(format: "%.2f×", large.ratio), "≥ 0.95×"])
            rows.append(["  pairs, alternating, \(large.settleSeconds) s settle: cp / docroute s",
                         zip(large.cpSeconds, large.docrouteSeconds).map { "\(Self.decimal($0)) / \(Self.decimal($1))" }.joined(separator: ", "), "", "", ""])
        }
        for figure in latency {
            rows.append(["latency at \(figure.rate)/s for \(figure.seconds) s: p50 / p99 / p99.9 ms",
                         "\(Self.decimal(figure.p50)) / \(Self.decimal(figure.p99)) / \(Self.decimal(figure.p999))", "", "",
                         figure.rate == 200 ? "p99 < 5 ms" : figure.rate == 1_000 ? "p99 < 20 ms" : ""])
            rows.append(["  max ms; received / sent", "\(Self.decimal(figure.max)); \(Self.count(figure.received)) / \(Self.count(figure.sent))", "", "", ""])
        }
        if let backlog {
            rows.append(["backlog of \(Self.count(backlog.files)) at start: seconds to READY", Self.decimal(backlog.secondsToReady), "", "", ""])
            rows.append(["  seconds to drain (last acknowledged)", Self.decimal(backlog.secondsToDrain), "", "", ""])
            rows.append(["  files/s; lost", "\(Self.count(backlog.filesPerSecond)); \(Self.count(backlog.lost))", "", "", "0 lost"])
            rows.append(["  delivered of those waiting", Self.count(backlog.files - backlog.lost),
                         "\(Self.count(backlog.baselineDelivered)) of \(Self.count(backlog.baselineWaiting))", "", ""])
            rows.append(["  daemon peak resident memory", Self.decimal(backlog.peakResidentMiB) + " MiB", "", "", "< 64 MiB"])
        }
        for figure in idle {
            rows.append(["idle \(Self.decimal(figure.seconds)) s\(figure.underServiceManager ? ", NOTIFY_SOCKET set" : ""): CPU ms; wake-ups",
                         "\(Self.decimal(figure.cpuMilliseconds)); \(figure.wakeups) (\(figure.threads) threads)", "", "", "0 polling"])
        }
        let widths = (0..<5).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            var line = row.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: "  ")
            while line.last == " " { line.removeLast() }
            return line
        }
    }

    static func count(_ value: Int) -> String { count(Double(value)) }

    static func count(_ value: Double) -> String {
        let formatter = NumberFormatter()
        formatter.numberStyle = .decimal
        formatter.maximumFractionDigits = 0
        formatter.groupingSeparator = ","
        return formatter.string(from: NSNumber(value: value.rounded())) ?? "\(Int(value))"
    }

    static func decimal(_ value: Double) -> String {
        value >= 100 ? String(format: "%.0f", value) : value >= 10 ? String(format: "%.1f", value) : String(format: "%.2f", value)
    }
}
