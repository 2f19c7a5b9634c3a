import Foundation
import Histogram
#if canImport(Glibc)
import Glibc
#endif

/// Files renamed into the inbox of a fresh daemon at a steady `rate` for `duration` seconds, and the
/// time from each rename to its `openURL` line at a subscriber that acknowledges at once.
/// Waits at most `tail` seconds after the last rename for the rest.
func measureSteadyLatency(rate: Int, duration: Int, tail: Double) throws -> Comparison.Latency {
    let daemon = try BenchDaemon(name: "latency")
    defer { daemon.stop() }
    try daemon.start()
    let subscriber = try AcknowledgingSubscriber(socket: daemon.socket)
    defer { subscriber.close() }
    let count = rate * duration
    let names = try daemon.stageFiles(count, size: 4096, prefix: "l")
    daemon.syncStaged()
    let sent = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: count)
    sent.initialize(repeating: 0)
    defer { sent.deallocate() }
    let sentBase = UInt(bitPattern: sent.baseAddress)
    let start = DispatchTime.now().uptimeNanoseconds
    let interval = UInt64(1_000_000_000 / rate)
    let writer = DispatchGroup()
    writer.enter()
    Thread {
        let sent = UnsafeMutablePointer<UInt64>(bitPattern: sentBase)!
        for index in 0..<count {
            let due = start + UInt64(index) * interval
            let now = DispatchTime.now().uptimeNanoseconds
            if due > now { usleep(useconds_t((due - now) / 1000)) }
            // Stored before the rename so the reader never sees an unset time.
            sent[index] = DispatchTime.now().uptimeNanoseconds
            daemon.dropStaged(names[index])
        }
        writer.leave()
    }.start()
    var histogram = Histogram<UInt64>(highestTrackableValue: 600_000_000)
    // The stall limit covers the whole run plus the tail: a daemon that falls behind still answers.
    subscriber.take(until: count, stall: Double(duration) + tail, each: { name, arrived in
        guard name.hasPrefix("l"), name.hasSuffix(".pdb"), let index = Int(name.dropFirst().dropLast(4)), index < count,
              sent[index] != 0 else { return }
        _ = histogram.record(min((arrived - sent[index]) / 1000, 600_000_000))
    })
    writer.wait()
    func ms(_ percentile: Double) -> Double { Double(histogram.valueAtPercentile(percentile)) / 1000 }
    return Comparison.Latency(rate: rate, seconds: duration, sent: count, received: Int(histogram.totalCount),
                              p50: ms(50), p99: ms(99), p999: ms(99.9), max: Double(histogram.max) / 1000)
}
