import DocRouteProtocol
import NIOConcurrencyHelpers
import NIOCore

/// One accepted client: its identity and a way to send it messages from any thread.
public final class ClientConnection: Sendable, Hashable {
    public let id: UInt64
    public let credentials: PeerCredentials
    let channel: any Channel
    /// Set once the connection subscribed as a handler: it may then stay idle as long as it likes.
    let subscribed = NIOLockedValueBox(false)

    init(id: UInt64, credentials: PeerCredentials, channel: any Channel) {
        self.id = id
        self.credentials = credentials
        self.channel = channel
    }

    /// Queues one message line. Writes keep their order; a closed connection drops them.
    public func send(_ message: DaemonMessage) {
        let bytes = message.encodedLine()
        var buffer = channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        channel.writeAndFlush(buffer, promise: nil)
    }

    /// Whether this connection is subscribed as a handler.
    public var isSubscribed: Bool { subscribed.withLockedValue { $0 } }

    func markSubscribed() {
        subscribed.withLockedValue { $0 = true }
    }

    /// Closes the connection.
    public func close() {
        channel.close(promise: nil)
    }

    public static func == (lhs: ClientConnection, rhs: ClientConnection) -> Bool { lhs.id == rhs.id }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}
