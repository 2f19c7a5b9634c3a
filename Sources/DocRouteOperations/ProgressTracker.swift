/// How far a long piece of work has come (the files a scan found, a handler's backlog), with a
/// rate over the last few seconds and an estimate of the time left.
///
/// Pure: the caller passes the time.
package struct ProgressTracker<Instant: InstantProtocol> where Instant.Duration == Duration {
    /// What is being done: `scan`, `intake`, `drain`.
    var phase: String
    /// Work items known so far; grows while the work runs (files keep arriving).
    private(set) var total: Int
    /// Items finished.
    private(set) var done = 0
    let started: Instant
    /// (time, done) about every `sampleSpacing`, the last `window` of them: the rate follows the
    /// current speed, not the average since the start.
    private var samples: [(Instant, Int)]

    static var window: Duration { .seconds(5) }
    static var sampleSpacing: Duration { .milliseconds(250) }

    init(phase: String, total: Int = 0, at now: Instant) {
        self.phase = phase
        self.total = total
        self.started = now
        self.samples = [(now, 0)]
    }

    /// Whether everything known is done.
    var isFinished: Bool { done >= total }

    mutating func add(_ count: Int = 1) {
        total += count
    }

    mutating func finish(_ count: Int = 1, at now: Instant) {
        done = min(total, done + count)
        if let last = samples.last, last.0.duration(to: now) >= Self.sampleSpacing {
            samples.append((now, done))
            let horizon = now.advanced(by: .zero - Self.window)
            // Keep one sample at or before the horizon so the window is always covered.
            while samples.count > 2 && samples[1].0 <= horizon { samples.removeFirst() }
        }
    }

    /// Items per second over the last few seconds (since the start when younger than that).
    func rate(at now: Instant) -> Double {
        let (since, doneThen) = samples.first ?? (started, 0)
        let seconds = Self.seconds(since.duration(to: now))
        guard seconds > 0.05 else { return 0 }
        return Double(done - doneThen) / seconds
    }

    /// Seconds until done at the current rate; nil while nothing has been done to judge by.
    func estimatedSecondsLeft(at now: Instant) -> Double? {
        let rate = rate(at: now)
        guard rate > 0 else { return nil }
        return Double(total - done) / rate
    }

    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
