import Foundation
import Testing

/// The short form of `make bench`: every benchmark runs end to end on a small load, so the suite
/// notices when one breaks. The figures of a debug build mean nothing and are not checked.
@Suite(.serialized) struct BenchmarkSmokeTests {
    func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: DaemonHarness.binDirectory + "/docroute-bench")
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: NSTemporaryDirectory())
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
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
}
