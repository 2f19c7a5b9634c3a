@testable import DocRouteConfiguration
@testable import DocRouteOperations
@testable import DocRoutePlatform
import DocRouteTestSupport
import Foundation
import Logging
import NIOConcurrencyHelpers
import SystemPackage
import Testing

/// The debounce that keeps `metrics_textfile` current without a timer, and the atomic write.
@Suite struct MetricsTextfileTests {
    typealias Instant = ContinuousClock.Instant
    let start = ContinuousClock.now

    func at(_ milliseconds: Int) -> Instant { start.advanced(by: .milliseconds(milliseconds)) }

    @Test func aChangeAfterQuietIsWrittenAtOnce() {
        var debounce = WriteDebounce<Instant>(interval: .seconds(1))
        #expect(debounce.changed(at: at(0)) == at(0))
        #expect(debounce.writing(at: at(0)) == true)
        // Long after: no wait.
        #expect(debounce.changed(at: at(5_000)) == at(5_000))
    }

    @Test func changesDuringActivityAreWrittenAtMostOncePerInterval() {
        var debounce = WriteDebounce<Instant>(interval: .seconds(1))
        #expect(debounce.changed(at: at(0)) == at(0))
        #expect(debounce.changed(at: at(10)) == nil, "a write is planned already; it takes this change too")
        #expect(debounce.writing(at: at(20)) == true)
        #expect(debounce.changed(at: at(300)) == at(1_020), "one interval after the last write began")
        #expect(debounce.changed(at: at(600)) == nil)
        #expect(debounce.changed(at: at(900)) == nil)
        #expect(debounce.writing(at: at(1_020)) == true)
        #expect(debounce.due == nil)
    }

    @Test func nothingChangedNothingWritten() {
        var debounce = WriteDebounce<Instant>(interval: .seconds(1))
        #expect(debounce.writing(at: at(0)) == false, "a wake-up with nothing dirty writes nothing")
        #expect(debounce.due == nil, "and plans nothing: idle stays idle")
        _ = debounce.changed(at: at(100))
        #expect(debounce.writing(at: at(100)) == true)
        #expect(debounce.writing(at: at(2_000)) == false, "a second wake-up after the write finds nothing to do")
    }

    @Test func atomicReplaceWritesReadableContentAndLeavesNoTemporary() throws {
        let temporary = try TemporaryFolder("metrics")
        defer { temporary.remove() }
        let folder = temporary.string
        let path = folder + "/docroute.prom"
        // A temporary left by a crash does not stop the next write.
        try Data("half".utf8).write(to: URL(fileURLWithPath: folder + "/.docroute.prom.tmp"))
        let previous = umask(0o077)
        defer { umask(previous) }
        try AtomicFile.replace(FilePath(path), with: Array("a 1\n".utf8))
        try AtomicFile.replace(FilePath(path), with: Array("a 2\n".utf8))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "a 2\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["docroute.prom"])
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o644, "a collector running as another user reads it, whatever the umask")
    }

    @Test func atomicReplaceIntoAMissingFolderSaysWhichFolder() throws {
        let temporary = try TemporaryFolder("metrics")
        defer { temporary.remove() }
        let folder = temporary.string
        #expect {
            try AtomicFile.replace(FilePath(folder + "/missing/docroute.prom"), with: [])
        } throws: { error in
            guard let error = error as? DeliveryError else { return false }
            return error.code == .vanished && error.message.contains(folder + "/missing")
        }
    }

    @Test func configurationTakesAnAbsoluteMetricsTextfileOrNone() throws {
        #expect(try DaemonConfiguration.parse("", file: "t").metricsTextfile == nil)
        #expect(try DaemonConfiguration.embeddedDefault().metricsTextfile == nil, "no file unless asked for")
        let set = try DaemonConfiguration.parse("metrics_textfile = \"/var/lib/prometheus/node-exporter/docroute.prom\"\n", file: "t")
        #expect(set.metricsTextfile == "/var/lib/prometheus/node-exporter/docroute.prom")
        #expect {
            try DaemonConfiguration.parse("socket = \"/run/s\"\nmetrics_textfile = \"docroute.prom\"\n", file: "t")
        } throws: { error in
            guard let error = error as? ConfigurationError else { return false }
            return error.inputKey == "metrics_textfile" && error.inputLine == 2 && "\(error)".contains("absolute")
        }
        #expect(throws: ConfigurationError.self) { try DaemonConfiguration.parse("metrics_textfile = \"/var/lib/\"\n", file: "t") }
    }

    @Test func writerCoalescesABurstAndStaysIdleAfterwards() async throws {
        let temporary = try TemporaryFolder("metrics")
        defer { temporary.remove() }
        let folder = temporary.string
        let path = folder + "/docroute.prom"
        let value = NIOLockedValueBox(0)
        let writer = MetricsTextfileWriter(path: FilePath(path), interval: .milliseconds(300), logger: Logger(label: "test")) {
            Array("docroute_test_total \(value.withLockedValue { $0 })\n".utf8)
        }
        for number in 1...200 {
            value.withLockedValue { $0 = number }
            writer.changed()
        }
        // The first change writes at once (taking whatever came before the write began), the rest
        // at most one interval later. Polled, not slept: a loaded machine may run the write late.
        // 60 s: synchronous tests elsewhere in the run may hold the cooperative pool for many seconds.
        let deadline = ContinuousClock.now.advanced(by: .seconds(60))
        // The count goes up just after the file is renamed into place: wait for both.
        while ((try? String(contentsOfFile: path, encoding: .utf8)) != "docroute_test_total 200\n" || writer.writeCount == 0)
            && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        try await Task.sleep(for: .milliseconds(50))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "docroute_test_total 200\n")
        let burst = writer.writeCount
        #expect((1...2).contains(burst), "200 changes in a burst: \(burst) writes")
        try await Task.sleep(for: .milliseconds(700))
        #expect(writer.writeCount == burst, "no change, no write")
        value.withLockedValue { $0 = 201 }
        writer.changed()
        await writer.flush()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "docroute_test_total 201\n")
        #expect(writer.writeCount == burst + 1)
    }
}
