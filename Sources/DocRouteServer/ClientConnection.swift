import DocRoutePlatform
import DocRouteProtocol
import NIOCore
import Synchronization
import SystemPackage

/// One accepted client: its identity and a way to send it messages from any thread.
package final class ClientConnection: Sendable, Hashable {
    package let id: UInt64
    package let credentials: PeerCredentials
    let transport: Transport
    /// The descriptor passed with the line being answered (descriptor socket only), until taken.
    let passedDescriptor = Mutex<Int32?>(nil)

    /// How replies reach the client.
    enum Transport: Sendable {
        /// A connection of the main socket, served by NIO.
        case channel(any Channel)
        /// A connection of the descriptor socket, written with blocking sends.
        case descriptorSocket(DescriptorSocketWriter)
    }

    /// What the idle check of the main socket looks at.
    struct Activity {
        /// Set once the connection subscribed as a handler: it may then stay idle as long as it likes.
        var subscribed = false
        /// A request is being answered: the connection is not idle, however long that takes.
        var answering = false
        /// When the client last sent something, or a request of it was last answered.
        var lastActive = ContinuousClock.now
    }
    let activity = Mutex(Activity())

    init(id: UInt64, credentials: PeerCredentials, channel: any Channel) {
        self.id = id
        self.credentials = credentials
        self.transport = .channel(channel)
    }

    init(id: UInt64, credentials: PeerCredentials, writer: DescriptorSocketWriter) {
        self.id = id
        self.credentials = credentials
        self.transport = .descriptorSocket(writer)
    }

    /// Whether this connection can carry passed descriptors (it came in on the descriptor socket).
    package var receivesDescriptors: Bool {
        if case .descriptorSocket = transport { true } else { false }
    }

    /// Takes the descriptor passed with the current line; the caller owns (and closes) it.
    package func takePassedDescriptor() -> Int32? {
        passedDescriptor.withLock { descriptor in
            defer { descriptor = nil }
            return descriptor
        }
    }

    /// Closes the descriptor passed with the current line, if one is left: the request was refused
    /// or answered without it. Nothing was read or written through it, and a close that fails has
    /// released the descriptor all the same, so there is nothing to report.
    package func discardPassedDescriptor() {
        if let unused = takePassedDescriptor() { FileDescriptor(rawValue: unused).closeIgnoringErrors() }
    }

    /// Queues one message line. Writes keep their order; a closed connection drops them.
    package func send(_ message: DaemonMessage) {
        let bytes = message.encodedLine()
        switch transport {
        case .channel(let channel):
            var buffer = channel.allocator.buffer(capacity: bytes.count)
            buffer.writeBytes(bytes)
            channel.writeAndFlush(buffer, promise: nil)
        case .descriptorSocket(let writer):
            writer.write(bytes)
        }
    }

    /// Sends one message line and returns once it is written (or the connection is gone): for
    /// the last line before the connection is closed.
    func sendThenWait(_ message: DaemonMessage) async {
        guard case .channel(let channel) = transport else {
            send(message)
            return
        }
        let bytes = message.encodedLine()
        var buffer = channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        try? await channel.writeAndFlush(buffer).get()
    }

    /// Whether this connection is subscribed as a handler.
    package var isSubscribed: Bool { activity.withLock { $0.subscribed } }

    package func markSubscribed() {
        activity.withLock { $0.subscribed = true }
    }

    /// The client sent something.
    func noteRead() {
        activity.withLock { $0.lastActive = .now }
    }

    /// A request is being answered (true) or was answered (false).
    func noteAnswering(_ answering: Bool) {
        activity.withLock {
            $0.answering = answering
            $0.lastActive = .now
        }
    }

    /// How long the connection has been idle: nil while subscribed or answering a request.
    var idleFor: Duration? {
        activity.withLock { $0.subscribed || $0.answering ? nil : ContinuousClock.now - $0.lastActive }
    }

    /// Closes the connection.
    package func close() {
        switch transport {
        case .channel(let channel): channel.close(promise: nil)
        case .descriptorSocket(let writer): writer.shutdown()
        }
    }

    package static func == (lhs: ClientConnection, rhs: ClientConnection) -> Bool { lhs.id == rhs.id }
    package func hash(into hasher: inout Hasher) { hasher.combine(id) }
}
