import ArgumentParser
import Foundation

extension DocRouteBench {
    struct EndToEnd: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A subscribed handler acknowledging a burst; latency from rename to openURL at a steady rate.")
        @Option var files = 10_000
        @Flag var quick = false

        func run() async throws {
            try burst()
            for rate in quick ? [200] : [200, 1000] {
                try latency(rate: rate, duration: quick ? 2 : 30)
            }
        }

        func subscribe(_ daemon: BenchDaemon) throws -> BenchClient {
            let client = try BenchClient(path: daemon.socket)
            client.send(#"{"type":"subscribe","id":"1","bundleIdentifier":"com.sunsetlakesoftware.molecules"}"#)
            _ = client.readLine()  // subscribed
            _ = client.readLine()  // the plain launch
            return client
        }

        func burst() throws {
            var rates: [Double] = []
            for _ in 0..<(quick ? 1 : 3) {
                let daemon = try BenchDaemon(name: "e2e")
                defer { daemon.stop() }
                try daemon.start()
                let client = try subscribe(daemon)
                defer { client.close() }
                let names = try daemon.stageFiles(files, size: 4096)
                var acknowledged = 0
                let elapsed = seconds {
                    for name in names { daemon.dropStaged(name) }
                    while acknowledged < files, let line = client.readLine() {
                        guard let id = BenchClient.field("deliveryID", in: line) else { continue }
                        client.send(#"{"type":"ack","deliveryID":"\#(id)","handled":true}"#)
                        acknowledged += 1
                    }
                }
                guard acknowledged == files else { throw BenchError("only \(acknowledged) of \(files) acknowledged") }
                rates.append(Double(files) / elapsed)
            }
            rates.sort()
            report("end to end: \(files) files until all acknowledged", rates[rates.count / 2], unit: "files/s", target: ">= 5,000")
        }

        /// Files renamed into the inbox at `rate` per second; latency from each rename to its openURL line.
        func latency(rate: Int, duration: Int) throws {
            let figure = try measureSteadyLatency(rate: rate, duration: duration, tail: 60)
            report("latency rename → openURL at \(rate)/s for \(duration) s: p50", figure.p50, unit: "ms")
            report("  p99", figure.p99, unit: "ms", target: rate == 200 ? "< 10 ms" : nil)
            report("  p99.9", figure.p999, unit: "ms")
        }
    }
}
