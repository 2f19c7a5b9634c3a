import DocRoutePlatform
import DocRouteProtocol
import NIOConcurrencyHelpers
import NIOCore

/// One accepted client: its identity and a way to send it messages from any thread.
package final class ClientConnection: Sendable, Hashable {
    package let id: UInt64
    package let credentials: PeerCredentials
    let transport: Transport
    /// The descriptor passed with the line being answered (descriptor socket only), until taken.
    let passedDescriptor = NIOLockedValueBox<Int32?>(nil)

    /// How replies reach the client.
    enum Transport: Sendable {
        /// A connection of the main socket, served by NIO.
        case channel(any Channel)
        /// A connection of the descriptor socket, written with blocking sends.
        case descriptorSocket(DescriptorSocketWriter)
    }
    /// Set once the connection subscribed as a handler: it may then stay idle as long as it likes.
    let subscribed = NIOLockedValueBox(false)

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
        passedDescriptor.withLockedValue { descriptor in
            defer { descriptor = nil }
            return descriptor
        }
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

    /// Whether this connection is subscribed as a handler.
    package var isSubscribed: Bool { subscribed.withLockedValue { $0 } }

    package func markSubscribed() {
        subscribed.withLockedValue { $0 = true }
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
