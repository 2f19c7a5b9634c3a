import NIOConcurrencyHelpers
import NIOCore

/// Keeps one client from making the daemon buffer without bound.
///
/// Reading from the peer pauses while many of its lines wait to be handled, or while its replies
/// pile up unread (the channel is not writable: NIO's pending writes passed the high-water mark),
/// and resumes once both have drained. A client that pipelines requests and never reads is thus
/// held by the kernel's socket buffers, not the daemon's memory; everyone else is unaffected.
package final class ReadBackpressure: Sendable {
    struct State {
        var waitingLines = 0
        var writable = true
        var paused = false
    }

    /// Lines read but not yet handled before reading pauses; handling them one by one keeps order.
    static let maximumWaitingLines = 64
    /// Reading resumes at this many waiting lines, so it does not toggle on every line.
    static let resumeWaitingLines = 16

    let channel: any Channel
    let state = NIOLockedValueBox(State())

    init(channel: any Channel) {
        self.channel = channel
    }

    /// On the event loop: the framer produced `count` lines.
    func linesQueued(_ count: Int) {
        update { $0.waitingLines += count }
    }

    /// From the task that handles the lines: one has been handled.
    func lineHandled() {
        update { $0.waitingLines -= 1 }
    }

    /// No line is waiting or being handled: the connection has no request in hand.
    var isIdle: Bool { state.withLockedValue { $0.waitingLines <= 0 } }

    /// On the event loop: `channelWritabilityChanged`.
    func writabilityChanged(_ writable: Bool) {
        update { $0.writable = writable }
    }

    private func update(_ change: (inout State) -> Void) {
        let flipped = state.withLockedValue { state -> Bool in
            change(&state)
            let limit = state.paused ? Self.resumeWaitingLines : Self.maximumWaitingLines
            let pause = !state.writable || state.waitingLines >= limit
            defer { state.paused = pause }
            return pause != state.paused
        }
        guard flipped else { return }
        // Applied on the event loop from the latest state, so racing flips from the handling task
        // and the event loop always settle on what the state says now.
        channel.eventLoop.execute { [channel, state] in
            let paused = state.withLockedValue { $0.paused }
            // Turning autoRead back on also issues the read that was held back.
            channel.setOption(ChannelOptions.autoRead, value: !paused).whenComplete { _ in }
        }
    }
}
