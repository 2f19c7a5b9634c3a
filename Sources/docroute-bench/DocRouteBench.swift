import ArgumentParser
import DocRouteHandlers
import DocRouteTypes
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `docroute-bench`: the benchmark suite. Run from a release build (`make bench`); every figure is
/// a median of several runs, and the delivery figures come with a baseline measured in the same
/// run on the same disk, so the ratio holds on a noisy shared machine.
@main
struct DocRouteBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "docroute-bench",
        abstract: "Measure docroute: typing, handler selection, reload, delivery, end-to-end latency, the comparison with an inotifywait script, and the mail drop.",
        subcommands: [All.self, Types.self, Selection.self, Delivery.self, EndToEnd.self, Compare.self, Mail.self],
        defaultSubcommand: All.self)

    struct All: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Every benchmark, in order: typing, selection, delivery against a durable copy loop and cp, and the comparison with the inotifywait script.",
            discussion: "end-to-end is not run here: compare measures the same bursts and latencies with a subscriber.")
        @Option(help: "Files per delivery burst.") var files = 10_000
        @Flag(help: "Short runs (for a smoke test in the suite).") var quick = false
        @Flag(help: "Write every figure as JSON on standard output (the tables go to standard error).") var json = false

        func run() throws {
            GroupedChild.stopAllOnInterrupt()
            if json { BenchOutput.shared.enableJSON() }
            let quickFlag = quick ? ["--quick"] : []
            try Types.parse(quickFlag).run()
            try Selection.parse(quickFlag).run()
            // compare measures the idle daemon, longer and with wake-ups, and the large file.
            try Delivery.parse(quickFlag + ["--files", "\(quick ? 500 : files)", "--skip-idle", "--large-mib", "0"]).run()
            let comparison = try Compare.parse(quickFlag).measure()
            try Mail.parse(quickFlag).run()
            try BenchOutput.shared.finish()
            try comparison.requireNothingLost()
        }
    }
}

/// Runs `body` `repetitions` times and returns the median of the per-run results.
func median(_ repetitions: Int, _ body: () throws -> Double) rethrows -> Double {
    var results: [Double] = []
    for _ in 0..<repetitions { results.append(try body()) }
    results.sort()
    return results[results.count / 2]
}

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func report(_ name: String, _ value: Double, unit: String, target: String? = nil) {
    let formatted = value >= 100 ? String(format: "%.0f", value) : String(format: "%.2f", value)
    BenchOutput.shared.human("\(name.padding(toLength: 58, withPad: " ", startingAt: 0)) \(formatted) \(unit)\(target.map { "   (target \($0))" } ?? "")")
    BenchOutput.shared.record(BenchOutput.Figure(name: name.trimmingCharacters(in: .whitespaces), value: value, unit: unit, target: target))
}

/// A line about a long phase, on standard error so it never mixes with the figures.
func progress(_ text: String) {
    var now = time(nil)
    var parts = tm()
    gmtime_r(&now, &parts)
    let clock = String(format: "%02d:%02d:%02d", parts.tm_hour, parts.tm_min, parts.tm_sec)
    FileHandle.standardError.write(Data("[\(clock)] \(text)\n".utf8))
}

var binDirectory: String {
    URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().path
}

/// The `docrouted` measured: `$DOCROUTE_BENCH_DAEMON` (`make bench` passes the static release build
/// that the Debian package and `make install` ship), or the one built beside the benchmark.
var daemonExecutable: String {
    ProcessInfo.processInfo.environment["DOCROUTE_BENCH_DAEMON"].flatMap { $0.isEmpty ? nil : $0 } ?? binDirectory + "/docrouted"
}

/// Where the benchmark trees go: a ``FreshFileSystem`` while one is mounted, `$DOCROUTE_BENCH_DIR` (another file system, such as the
/// journaled ext4 image of bench/on-journaled-ext4.sh), or `.build-bench` in the working folder.
func scratchFolder(_ name: String) -> String {
    let base = FreshFileSystem.current ?? ProcessInfo.processInfo.environment["DOCROUTE_BENCH_DIR"].flatMap { $0.isEmpty ? nil : $0 }
        ?? (FileManager.default.currentDirectoryPath as NSString).appendingPathComponent(".build-bench")
    return (base as NSString).appendingPathComponent("\(name)-\(getpid())")
}

/// A ``scratchFolder(_:)`` made afresh (what an earlier run of the same process id left there
/// is removed) holding the empty folders `subfolders`; its path.
func freshScratchFolder(_ name: String, holding subfolders: [String]) throws -> String {
    let root = scratchFolder(name)
    try? FileManager.default.removeItem(atPath: root)
    for folder in subfolders {
        try FileManager.default.createDirectory(atPath: root + "/" + folder, withIntermediateDirectories: true)
    }
    return root
}

var repositoryRoot: String {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
}
