import DocRoutePlatform
import Logging
import Synchronization

/// Warns of refused connections (and failed accepts) one line a second at most, with the count
/// since the last line: a flood must not flood the journal.
package final class RefusalLog: Sendable {
    struct State {
        var sinceLast = 0
        var lastLogged: ContinuousClock.Instant?
    }

    let logger: Logger
    /// Which socket, for the log line.
    let what: String
    let state = Mutex(State())

    package init(logger: Logger, what: String) {
        self.logger = logger
        self.what = what
    }

    /// Counts one refusal, and logs `message` unless a line went out less than a second ago.
    func note(_ message: String, peer: PeerCredentials?) {
        let count: Int? = state.withLock { state in
            state.sinceLast += 1
            let now = ContinuousClock.now
            if let last = state.lastLogged, now - last < .seconds(1) { return nil }
            state.lastLogged = now
            defer { state.sinceLast = 0 }
            return state.sinceLast
        }
        guard let count else { return }
        var metadata: Logger.Metadata = ["socket": "\(what)", "refused": "\(count)"]
        if let peer { metadata["peer"] = "\(peer)" }
        logger.warning("\(message)", metadata: metadata)
    }
}
