import DocRouteProtocol
import NIOCore

/// One accepted client: its identity and a way to send it messages from any thread.
public final class ClientConnection: Sendable, Hashable {
    public let id: UInt64
    public let credentials: PeerCredentials
    let channel: any Channel

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

    /// Closes the connection.
    public func close() {
        channel.close(promise: nil)
    }

    public static func == (lhs: ClientConnection, rhs: ClientConnection) -> Bool { lhs.id == rhs.id }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}
