import ArgumentParser
import Foundation
import Histogram
#if canImport(Glibc)
import Glibc
#endif

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
            let daemon = try BenchDaemon(name: "latency")
            defer { daemon.stop() }
            try daemon.start()
            let client = try subscribe(daemon)
            defer { client.close() }
            let count = rate * duration
            let names = try daemon.stageFiles(count, size: 4096, prefix: "l")
            let sent = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: count)
            sent.initialize(repeating: 0)
            defer { sent.deallocate() }
            let sentBase = UInt(bitPattern: sent.baseAddress)
            let start = DispatchTime.now().uptimeNanoseconds
            let interval = UInt64(1_000_000_000 / rate)
            let writer = Thread {
                let sent = UnsafeMutablePointer<UInt64>(bitPattern: sentBase)!
                for index in 0..<count {
                    let due = start + UInt64(index) * interval
                    let now = DispatchTime.now().uptimeNanoseconds
                    if due > now { usleep(useconds_t((due - now) / 1000)) }
                    let at = DispatchTime.now().uptimeNanoseconds
                    // Store before the rename so the reader never sees an unset time.
                    sent[index] = at
                    daemon.dropStaged(names[index])
                }
            }
            writer.start()
            var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000)
            var received = 0
            while received < count, let line = client.readLine() {
                let arrived = DispatchTime.now().uptimeNanoseconds
                guard let id = BenchClient.field("deliveryID", in: line), let url = BenchClient.field("url", in: line),
                      let slash = url.lastIndex(of: "/") else { continue }
                client.send(#"{"type":"ack","deliveryID":"\#(id)","handled":true}"#)
                let name = url[url.index(after: slash)...]
                guard name.hasPrefix("l"), let index = Int(name.dropFirst().dropLast(4)), index < count else { continue }
                _ = histogram.record((arrived - sent[index]) / 1000)
                received += 1
            }
            func ms(_ percentile: Double) -> Double { Double(histogram.valueAtPercentile(percentile)) / 1000 }
            report("latency rename → openURL at \(rate)/s for \(duration) s: p50", ms(50), unit: "ms")
            report("  p99", ms(99), unit: "ms", target: rate == 200 ? "< 10 ms" : nil)
            report("  p99.9", ms(99.9), unit: "ms")
        }
    }
}
