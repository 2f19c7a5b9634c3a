/// When to write a file that reflects changing state: soon after a change, at most once per
/// `interval` while changes keep coming, and never when nothing changed.
///
/// Pure: the caller passes the time and runs the writes. No timer ticks while idle; a write is
/// planned only by a change.
package struct WriteDebounce<Instant: InstantProtocol> where Instant.Duration == Duration {
    /// The shortest time between two writes.
    let interval: Duration
    /// When the last write started.
    private(set) var lastWrite: Instant?
    /// When the planned write is due; nil when none is planned.
    private(set) var due: Instant?
    /// Changes not yet written.
    private(set) var dirty = false

    init(interval: Duration) {
        self.interval = interval
    }

    /// Something changed at `now`. Returns when to write if a write must now be planned, nil when
    /// one is planned already (it will pick this change up).
    mutating func changed(at now: Instant) -> Instant? {
        dirty = true
        guard due == nil else { return nil }
        var when = now
        if let lastWrite, lastWrite.advanced(by: interval) > now { when = lastWrite.advanced(by: interval) }
        due = when
        return when
    }

    /// The planned write is starting at `now`: true if there is anything to write. Changes from
    /// here on plan the next write, at least `interval` later.
    mutating func writing(at now: Instant) -> Bool {
        due = nil
        guard dirty else { return false }
        dirty = false
        lastWrite = now
        return true
    }
}
