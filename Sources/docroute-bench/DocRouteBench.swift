import ArgumentParser
import DocRouteHandlers
import DocRouteTypes
import Foundation

/// `docroute-bench`: the benchmark suite. Run from a release build (`make bench`); every figure is
/// a median of several runs, and the delivery figures come with a baseline measured in the same
/// run on the same disk, so the ratio holds on a noisy shared machine.
@main
struct DocRouteBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "docroute-bench",
        abstract: "Measure docroute: typing, handler selection, reload, delivery, end-to-end latency.",
        subcommands: [All.self, Types.self, Selection.self, Delivery.self, EndToEnd.self, Mail.self],
        defaultSubcommand: All.self)

    struct All: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every benchmark, in order.")
        @Option(help: "Files per delivery burst.") var files = 10_000
        @Flag(help: "Short runs (for a smoke test in the suite).") var quick = false

        func run() async throws {
            let quickFlag = quick ? ["--quick"] : []
            try Types.parse(quickFlag).run()
            try Selection.parse(quickFlag).run()
            try Delivery.parse(quickFlag + ["--files", "\(quick ? 500 : files)"]).run()
            var endToEnd = try EndToEnd.parse(quickFlag + ["--files", "\(quick ? 300 : files)"])
            try await endToEnd.run()
            var mail = try Mail.parse(quickFlag)
            try await mail.run()
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
    print("\(name.padding(toLength: 58, withPad: " ", startingAt: 0)) \(formatted) \(unit)\(target.map { "   (target \($0))" } ?? "")")
    fflush(nil)
}

var binDirectory: String {
    URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().path
}

var repositoryRoot: String {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
}
