/// How long each step of a delivery batch took, for the debug log: on a slow disk it shows which
/// kernel work (creating files, flushing, the ledger) the time goes to.
package struct BatchStepTimings: CustomStringConvertible, Sendable {
    private var last = ContinuousClock.now
    private var steps: [(name: String, duration: Duration)] = []

    /// Ends the step that ran since the previous mark (or since creation).
    mutating func mark(_ name: String) {
        let now = ContinuousClock.now
        steps.append((name, now - last))
        last = now
    }

    /// `copy=1234us sync=56us …`
    package var description: String {
        steps.map { "\($0.name)=\(Int($0.duration / .microseconds(1)))us" }.joined(separator: " ")
    }
}
