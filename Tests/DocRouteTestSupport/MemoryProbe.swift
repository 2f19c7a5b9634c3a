import Foundation

/// A memory measurement made alone in a child process (a peak resident size holds for a process's
/// whole life, so each measurement needs a process of its own): the test binary started again for
/// one probe test, which takes its inputs from environment variables and writes a report of
/// `key=value` lines to a file; the parent test makes the assertions on the report.
public enum MemoryProbe {
    /// Runs the test `probe` alone in a child of this test binary with `environment` added, its
    /// output going to the file `log`; the report the child wrote to `reportPath`, by key.
    /// - Throws: when the child failed or wrote no report, with the end of its output.
    public static func run(_ probe: String, environment: [String: String], reportPath: String, log: String) throws -> [String: String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["--testing-library", "swift-testing", "--filter", probe]
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = output
        process.standardError = output
        try process.run()
        process.waitUntilExit()
        try output.close()
        let logText = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        guard process.terminationStatus == 0, let text = try? String(contentsOfFile: reportPath, encoding: .utf8) else {
            throw TestSupportError("the probe failed (status \(process.terminationStatus)):\n\(logText.suffix(4000))")
        }
        var report: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            report[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return report
    }

    /// A `kB` field of /proc/self/status (`VmHWM`, the peak resident size), in KiB; -1 when missing.
    public static func status(_ field: String) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            return Int(line.dropFirst(field.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "") ?? -1
        }
        return -1
    }
}
