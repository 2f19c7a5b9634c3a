import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What `/proc` says about one running process: CPU time, wake-ups, peak memory.
struct ProcessMeter: Sendable {
    let pid: pid_t

    /// CPU time used so far by all threads, in seconds (utime + stime of `/proc/<pid>/stat`).
    var cpuSeconds: Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return 0 }
        // Fields after the command name start at field 3 (state); utime and stime are fields 14 and 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12 else { return 0 }
        let ticks = (Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Context switches so far, voluntary plus involuntary, by thread id: each is a wake-up.
    var contextSwitches: [String: Int] {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { return [:] }
        var byThread: [String: Int] = [:]
        for task in tasks {
            byThread[task] = Self.statusFields("/proc/\(pid)/task/\(task)/status")
                .filter { $0.key == "voluntary_ctxt_switches" || $0.key == "nonvoluntary_ctxt_switches" }
                .reduce(0) { $0 + (Int($1.value) ?? 0) }
        }
        return byThread
    }

    /// Wake-ups between two readings of ``contextSwitches``: threads that ended in between take
    /// their counts with them, so only threads alive at the second reading count.
    static func wakeups(from before: [String: Int], to after: [String: Int]) -> Int {
        after.reduce(0) { $0 + $1.value - (before[$1.key] ?? 0) }
    }

    var threads: Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task").count) ?? 0
    }

    /// Peak resident memory (VmHWM), in MiB.
    var peakResidentMiB: Double {
        guard let value = Self.statusFields("/proc/\(pid)/status").first(where: { $0.key == "VmHWM" })?.value else { return 0 }
        return (Double(value.split(separator: " ").first ?? "") ?? 0) / 1024
    }

    private static func statusFields(_ path: String) -> [(key: Substring, value: Substring)] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (line[..<colon], line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" })
        }
    }
}
