import DocRouteTestSupport
import Foundation
import Testing

/// The short form of `make bench`: every benchmark runs end to end on a small load, so the suite
/// notices when one breaks. The figures of a debug build mean nothing and are not checked.
@Suite(.serialized) struct BenchmarkSmokeTests {
    func run(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: DaemonHarness.binDirectory + "/docroute-bench")
        process.arguments = arguments
        let temporary = try TemporaryFolder("bench")
        defer { temporary.remove() }
        process.currentDirectoryURL = URL(fileURLWithPath: temporary.string)
        let pipe = Pipe()
        process.standardOutput = pipe
        // Standard error (progress, and the table under --json) goes to a file: two pipes read one
        // after the other could block the child.
        let errorPath = temporary.string("stderr")
        _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let errors = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
        return (process.terminationStatus, output, errors)
    }

    @Test func typingAndSelectionBenchmarksRun() throws {
        let types = try run(["types", "--quick"])
        #expect(types.status == 0)
        #expect(types.output.contains("types by name"))
        let selection = try run(["selection", "--quick"])
        #expect(selection.status == 0)
        #expect(selection.output.contains("handler choice, 200 handlers"))
    }

    @Test func deliveryBenchmarkRunsAgainstTheRealDaemon() throws {
        let delivery = try run(["delivery", "--quick", "--files", "200"])
        #expect(delivery.status == 0, "\(delivery.output)")
        #expect(delivery.output.contains("ratio docroute / baseline"))
    }

    /// The comparison with the administrator's inotifywait script (bench/baseline/inotify-copy.sh),
    /// lighter than --quick on its slowest phases. Speeds are not checked; what must hold on any
    /// machine is: docroute loses nothing, and the script never sees files that were there first.
    @Test func comparisonWithTheInotifyScriptRunsAndLosesNothing() throws {
        let compare = try run(["compare", "--quick", "--json", "--files", "400", "--rate", "200", "--backlog", "300", "--idle-seconds", "2"])
        #expect(compare.status == 0, "\(compare.errors)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(compare.output.utf8)) as? [String: Any], "\(compare.output)")
        let comparison = try #require(document["compare"] as? [String: Any])

        let bursts = try #require(comparison["bursts"] as? [[String: Any]])
        #expect(bursts.count == 1)
        let burst = try #require(bursts.first)
        #expect(burst["files"] as? Int == 400)
        let docroute = try #require(burst["docroute"] as? [String: Any])
        #expect(docroute["lost"] as? Int == 0)
        #expect(docroute["delivered"] as? Int == 400)
        #expect(docroute["notified"] as? Int == 400)
        #expect((docroute["filesPerSecond"] as? Double ?? 0) > 0)
        #expect((docroute["peakResidentMiB"] as? Double ?? 0) > 0)
        // What the peak was made of, read from smaps_rollup during the burst.
        let memory = try #require(docroute["peakMemory"] as? [String: Any], "\(docroute)")
        #expect((memory["anonymousMiB"] as? Double ?? 0) > 0 && (memory["fileMiB"] as? Double ?? 0) > 0, "\(memory)")
        let script = try #require(burst["baseline"] as? [String: Any])
        let scriptDelivered = try #require(script["delivered"] as? Int)
        #expect(scriptDelivered > 0, "the inotifywait script copied nothing: \(compare.errors)")
        #expect(script["lost"] as? Int == 400 - scriptDelivered)
        #expect(burst["ratio"] is Double)
        // The two baselines of the same run, on the same file system.
        #expect((burst["diskLine"] as? Double ?? 0) > 0, "\(burst)")
        #expect((burst["durableLoop"] as? Double ?? 0) > 0, "\(burst)")

        // The large file (8 MiB under --quick), one pair: docroute until acknowledged, cp and fsync.
        let large = try #require(comparison["large"] as? [String: Any], "\(comparison.keys)")
        #expect(large["mebibytes"] as? Int == 8)
        let docrouteSeconds = try #require(large["docrouteSeconds"] as? [Double])
        let cpSeconds = try #require(large["cpSeconds"] as? [Double])
        #expect(docrouteSeconds.count == 1 && cpSeconds.count == 1)
        #expect(docrouteSeconds.allSatisfy { $0 > 0 } && cpSeconds.allSatisfy { $0 > 0 })
        #expect((large["ratio"] as? Double ?? 0) > 0)

        let latency = try #require(comparison["latency"] as? [[String: Any]])
        #expect(latency.map { $0["rate"] as? Int } == [200])
        let steady = try #require(latency.first)
        #expect(steady["received"] as? Int == 600)
        let p50 = try #require(steady["p50"] as? Double)
        let p99 = try #require(steady["p99"] as? Double)
        #expect(p50 > 0 && p50 <= p99)

        let backlog = try #require(comparison["backlog"] as? [String: Any])
        #expect(backlog["lost"] as? Int == 0)
        #expect((backlog["secondsToReady"] as? Double ?? 0) > 0)
        #expect(backlog["baselineDelivered"] as? Int == 0, "the script cannot see files that were waiting before it started")

        let idle = try #require(comparison["idle"] as? [[String: Any]])
        #expect(idle.map { $0["underServiceManager"] as? Bool } == [false, true])
        #expect(idle.allSatisfy { ($0["cpuMilliseconds"] as? Double ?? -1) >= 0 && ($0["wakeups"] as? Int ?? -1) >= 0 })
        // The table is still there for people, on standard error under --json.
        #expect(compare.errors.contains("burst 400 × 4 KiB: files/s"))
        #expect(compare.errors.contains("the disk's line"))
        #expect(compare.errors.contains("the admin's durable loop"))
        #expect(compare.errors.contains("one 8 MiB file until durable"))
    }
}
