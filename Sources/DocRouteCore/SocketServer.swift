import CDocRouteShim
import DocRouteProtocol
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// Answers the requests of one connection, one at a time in the order they arrived.
public protocol RequestResponder: Sendable {
    func respond(to message: ClientMessage, from connection: ClientConnection) async
    func connectionClosed(_ connection: ClientConnection) async
}

/// The Unix stream socket handlers and tools connect to (PROTOCOL.md, "Transport").
///
/// Binds the configured path, or adopts the descriptor systemd passed (socket activation). Each
/// connection's identity comes from `SO_PEERCRED`. Connections beyond `maxConnections` get an
/// `error` line and are closed at once, so idle clients cannot starve the others.
public final class SocketServer: Sendable {
    let group: any EventLoopGroup
    let responder: any RequestResponder
    let maxConnections: Int
    let logger: Logger
    let state = NIOLockedValueBox(State())
    struct State {
        var nextID: UInt64 = 1
        var open = 0
        var channel: (any Channel)?
    }

    public init(group: any EventLoopGroup, responder: any RequestResponder, maxConnections: Int, logger: Logger) {
        self.group = group
        self.responder = responder
        self.maxConnections = maxConnections
        self.logger = logger
    }

    /// Where the socket comes from.
    public enum Endpoint: Sendable {
        /// Bind this path (a stale socket file left by a crash is replaced; the mode lets handler users connect).
        case path(String)
        /// Adopt a bound, listening descriptor (systemd's `docroute.socket`).
        case descriptor(Int32)
    }

    /// Starts accepting.
    public func start(_ endpoint: Endpoint) async throws {
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .childChannelOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 1024, initial: 16384, maximum: 65536))
            .childChannelInitializer { [self] channel in
                self.accept(channel)
            }
        let channel: any Channel
        switch endpoint {
        case .path(let path):
            channel = try await bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true).get()
            // Authorization is by peer credentials, so any local user may connect.
            chmod(path, 0o666)
        case .descriptor(let fd):
            channel = try await bootstrap.withBoundSocket(fd).get()
        }
        state.withLockedValue { $0.channel = channel }
    }

    /// The file system path a bound Unix socket descriptor listens on, or nil (not a Unix socket,
    /// or an abstract one). With socket activation this, not the configuration, is where handlers
    /// must connect.
    public static func boundPath(of descriptor: Int32) -> String? {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let found = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) == 0 }
        }
        guard found, address.sun_family == sa_family_t(AF_UNIX) else { return nil }
        let pathLength = Int(length) - MemoryLayout.offset(of: \sockaddr_un.sun_path)!
        guard pathLength > 1 else { return nil }
        return withUnsafeBytes(of: address.sun_path) { bytes in
            let raw = bytes.prefix(pathLength)
            guard raw.first != 0 else { return nil }
            return String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    /// Stops accepting and closes the listening socket (open connections finish on their own).
    public func stop() async {
        let channel = state.withLockedValue { $0.channel }
        try? await channel?.close()
    }

    /// Open connections now.
    public var openConnections: Int { state.withLockedValue { $0.open } }

    func accept(_ channel: any Channel) -> EventLoopFuture<Void> {
        let admitted: UInt64? = state.withLockedValue { state in
            guard state.open < maxConnections else { return nil }
            state.open += 1
            defer { state.nextID += 1 }
            return state.nextID
        }
        guard let id = admitted else {
            logger.warning("connection refused: \(maxConnections) connections are open (max_connections)")
            let line = DaemonMessage.error(id: nil, code: .internal, message: "too many connections (\(maxConnections)); try again later").encodedLine()
            // The channel is not active yet inside the initializer: refuse once it is.
            return channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(RefusingHandler(line: line))
            }
        }
        return Self.peerCredentials(of: channel).flatMap { credentials in
            self.serve(channel, id: id, credentials: credentials)
        }
    }

    func serve(_ channel: any Channel, id: UInt64, credentials: PeerCredentials) -> EventLoopFuture<Void> {
        let connection = ClientConnection(id: id, credentials: credentials, channel: channel)
        let (frames, continuation) = AsyncStream.makeStream(of: LineFramer.Frame.self, bufferingPolicy: .unbounded)
        let responder = self.responder
        let logger = self.logger
        let backpressure = ReadBackpressure(channel: channel)
        channel.closeFuture.whenComplete { [state] _ in
            state.withLockedValue { $0.open -= 1 }
            continuation.finish()
        }
        Task {
            for await frame in frames {
                defer { backpressure.lineHandled() }
                switch frame {
                case .line(let bytes):
                    let message: ClientMessage
                    do throws(ProtocolError) {
                        message = try ClientMessage(decoding: bytes)
                    } catch {
                        connection.send(.error(error))
                        continue
                    }
                    await responder.respond(to: message, from: connection)
                case .lineTooLong:
                    connection.send(.error(id: nil, code: .badRequest, message: "line longer than \(WireProtocol.maximumLineLength) bytes; the connection is closed"))
                    connection.close()
                case .incompleteLine:
                    logger.debug("connection closed in the middle of a line", metadata: ["peer": "\(credentials)"])
                }
            }
            await responder.connectionClosed(connection)
        }
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(LineReadHandler(continuation: continuation, backpressure: backpressure))
        }
    }

    /// A peer whose credentials cannot be read is treated as nobody: it may connect but not act.
    static let unknownPeer = PeerCredentials(pid: 0, uid: UInt32.max - 1, gid: UInt32.max - 1)

    static func peerCredentials(of channel: any Channel) -> EventLoopFuture<PeerCredentials> {
        // SocketChannel is a SocketOptionProvider; ucred is three 32-bit fields, laid out as our shim struct.
        guard let provider = channel as? any SocketOptionProvider else {
            return channel.eventLoop.makeSucceededFuture(unknownPeer)
        }
        let future: EventLoopFuture<docroute_peer_credentials> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        return future
            .map { PeerCredentials(pid: $0.pid, uid: $0.uid, gid: $0.gid) }
            .recover { _ in unknownPeer }
    }
}

/// Splits a connection's bytes into protocol lines.
final class LineReadHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    // Touched only on the channel's event loop.
    var framer = LineFramer()
    let continuation: AsyncStream<LineFramer.Frame>.Continuation
    let backpressure: ReadBackpressure

    init(continuation: AsyncStream<LineFramer.Frame>.Continuation, backpressure: ReadBackpressure) {
        self.continuation = continuation
        self.backpressure = backpressure
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = Self.unwrapInboundIn(data)
        let frames = buffer.withUnsafeReadableBytes { framer.feed($0) }
        guard !frames.isEmpty else { return }
        backpressure.linesQueued(frames.count)
        for frame in frames { continuation.yield(frame) }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        backpressure.writabilityChanged(context.channel.isWritable)
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let last = framer.finish() {
            backpressure.linesQueued(1)
            continuation.yield(last)
        }
        continuation.finish()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

/// Sends one error line to a connection over the cap, then closes it.
final class RefusingHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    let line: [UInt8]

    init(line: [UInt8]) {
        self.line = line
    }

    func channelActive(context: ChannelHandlerContext) {
        var buffer = context.channel.allocator.buffer(capacity: line.count)
        buffer.writeBytes(line)
        context.writeAndFlush(NIOAny(buffer)).whenComplete { [context] _ in context.close(promise: nil) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
}
