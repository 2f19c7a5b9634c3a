import CDocRouteShim
import DocRoutePlatform
import DocRouteProtocol
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// Answers the requests of one connection, one at a time in the order they arrived.
package protocol RequestResponder: Sendable {
    func respond(to message: ClientMessage, from connection: ClientConnection) async
    func connectionClosed(_ connection: ClientConnection) async
}

/// The Unix stream socket handlers and tools connect to (PROTOCOL.md, "Transport").
///
/// Binds the configured path, or adopts the descriptor systemd passed (socket activation). Each
/// connection's identity comes from `SO_PEERCRED`. Connections beyond the ``ConnectionLimits``
/// (in all, per uid, the room kept for handlers) get a `too-many-connections` error line and are
/// closed at once, so idle clients cannot starve the others.
package final class SocketServer: Sendable {
    let group: any EventLoopGroup
    let responder: any RequestResponder
    let limits: ConnectionLimits
    let ledger: ConnectionLimits.Ledger
    /// Whether a uid is one that a registered handler runs as (it may use the reserved connections).
    let isHandlerUser: @Sendable (UInt32) -> Bool
    let logger: Logger
    let state = NIOLockedValueBox(State())
    struct State {
        var nextID: UInt64 = 1
        var channel: (any Channel)?
        /// The socket file this server bound (device, inode), the only one it may remove.
        var boundFile: (path: String, device: UInt64, inode: UInt64)?
        var refusedSinceLog = 0
        var lastRefusalLog: ContinuousClock.Instant?
    }

    package init(group: any EventLoopGroup, responder: any RequestResponder, limits: ConnectionLimits,
                isHandlerUser: @escaping @Sendable (UInt32) -> Bool = { _ in false }, logger: Logger) {
        self.group = group
        self.responder = responder
        self.limits = limits
        self.ledger = ConnectionLimits.Ledger(limits: limits)
        self.isHandlerUser = isHandlerUser
        self.logger = logger
    }

    package convenience init(group: any EventLoopGroup, responder: any RequestResponder, maxConnections: Int, logger: Logger) {
        self.init(group: group, responder: responder, limits: ConnectionLimits(maxConnections: maxConnections), logger: logger)
    }

    /// Where the socket comes from.
    package enum Endpoint: Sendable {
        /// Bind this path (a stale socket file left by a crash is replaced, one another daemon still
        /// serves is not; the mode lets handler users connect).
        case path(String)
        /// Adopt a bound, listening descriptor (systemd's `docroute.socket`).
        case descriptor(Int32)
    }

    /// Starts accepting.
    package func start(_ endpoint: Endpoint) async throws {
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .childChannelOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 1024, initial: 16384, maximum: 65536))
            .childChannelInitializer { [self] channel in
                self.accept(channel)
            }
        let channel: any Channel
        switch endpoint {
        case .path(let path):
            try Self.removeStaleSocket(at: path)
            // Bound here, close-on-exec, rather than by NIO: a listening socket inherited by a
            // child (the crash backtracer outlives a crashed daemon) would still accept, and the
            // next daemon would take it for a live one.
            let descriptor = try Self.bindListening(path: path)
            do {
                channel = try await bootstrap.withBoundSocket(descriptor).get()
            } catch {
                close(descriptor)
                unlink(path)
                throw error
            }
            // Authorization is by peer credentials, so any local user may connect.
            chmod(path, 0o666)
            var info = stat()
            if lstat(path, &info) == 0 {
                state.withLockedValue { $0.boundFile = (path, UInt64(info.st_dev), UInt64(info.st_ino)) }
            }
        case .descriptor(let fd):
            channel = try await bootstrap.withBoundSocket(fd).get()
        }
        state.withLockedValue { $0.channel = channel }
    }

    /// The file system path a bound Unix socket descriptor listens on, or nil (not a Unix socket,
    /// or an abstract one). With socket activation this, not the configuration, is where handlers
    /// must connect.
    package static func boundPath(of descriptor: Int32) -> String? {
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

    /// Stops accepting and closes the listening socket (open connections finish on their own), and
    /// removes the socket file if it is still the one this server bound: never one that another
    /// daemon bound since, nor one systemd passed.
    package func stop() async {
        let (channel, bound) = state.withLockedValue { ($0.channel, $0.boundFile) }
        try? await channel?.close()
        if let bound {
            var info = stat()
            if lstat(bound.path, &info) == 0, UInt64(info.st_dev) == bound.device, UInt64(info.st_ino) == bound.inode {
                unlink(bound.path)
            }
        }
    }

    /// Open connections now.
    package var openConnections: Int { ledger.openConnections }

    /// A Unix stream socket bound to `path` and listening, close-on-exec and non-blocking.
    static func bindListening(path: String) throws -> Int32 {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard descriptor >= 0 else {
            let code = errno
            throw SocketServerError(code: .socketFailed, message: "a socket cannot be created: \(String(cString: strerror(code)))", cause: Errno(rawValue: code))
        }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(descriptor)
            throw SocketServerError(code: .pathTooLong, message: "the socket path \(path) is longer than \(MemoryLayout.size(ofValue: address.sun_path) - 1) bytes; configure a shorter one")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(descriptor, 256) == 0 else {
            let code = errno
            close(descriptor)
            throw SocketServerError(code: .bindFailed, message: "the socket \(path) cannot be bound: \(String(cString: strerror(code))); check that its folder exists and is writable", cause: Errno(rawValue: code))
        }
        return descriptor
    }

    /// A socket file left at `path` by a daemon that is gone is removed; one that still accepts
    /// connections belongs to a live daemon and is left alone: starting fails instead.
    package static func removeStaleSocket(at path: String) throws {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard info.st_mode & S_IFMT == S_IFSOCK else {
            throw SocketServerError(code: .notASocket, message: "\(path) exists and is not a socket; remove it or configure another socket path")
        }
        let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard probe >= 0 else { return }
        defer { close(probe) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        var result: Int32
        repeat {
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(probe, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
        } while result != 0 && errno == EINTR
        if result == 0 {
            throw SocketServerError(code: .inUse, message: "another daemon serves the socket \(path); stop it first, or configure another socket path")
        }
        unlink(path)
    }

    func accept(_ channel: any Channel) -> EventLoopFuture<Void> {
        Self.peerCredentials(of: channel).flatMap { credentials in
            if let refusal = self.ledger.admit(credentials, isHandlerUser: credentials.uid != 0 && self.isHandlerUser(credentials.uid)) {
                self.logRefusal(refusal, peer: credentials)
                let line = DaemonMessage.error(id: nil, code: .tooManyConnections, message: refusal).encodedLine()
                // The channel is not active yet inside the initializer: refuse once it is.
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(RefusingHandler(line: line))
                }
            }
            let id = self.state.withLockedValue { state in
                defer { state.nextID += 1 }
                return state.nextID
            }
            return self.serve(channel, id: id, credentials: credentials)
        }
    }

    /// One warning a second at most, with the count refused since: a flood must not flood the journal.
    func logRefusal(_ refusal: String, peer: PeerCredentials) {
        let refused: Int? = state.withLockedValue { state in
            state.refusedSinceLog += 1
            let now = ContinuousClock.now
            if let last = state.lastRefusalLog, now - last < .seconds(1) { return nil }
            state.lastRefusalLog = now
            defer { state.refusedSinceLog = 0 }
            return state.refusedSinceLog
        }
        if let refused {
            logger.warning("connection refused: \(refusal)", metadata: ["peer": "\(peer)", "refused": "\(refused)"])
        }
    }

    func serve(_ channel: any Channel, id: UInt64, credentials: PeerCredentials) -> EventLoopFuture<Void> {
        let connection = ClientConnection(id: id, credentials: credentials, channel: channel)
        let (frames, continuation) = AsyncStream.makeStream(of: LineFramer.Frame.self, bufferingPolicy: .unbounded)
        let responder = self.responder
        let logger = self.logger
        let backpressure = ReadBackpressure(channel: channel)
        channel.closeFuture.whenComplete { [ledger] _ in
            ledger.release(credentials)
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
            try channel.pipeline.syncOperations.addHandler(LineReadHandler(
                continuation: continuation, backpressure: backpressure, connection: connection,
                ledger: ledger, idleTimeout: limits.idleTimeout, logger: logger))
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

/// Splits a connection's bytes into protocol lines, keeps the connection's unfinished line within
/// the limit for all connections together, and closes it when idle too long before subscribing.
package final class LineReadHandler: ChannelInboundHandler, @unchecked Sendable {
    package typealias InboundIn = ByteBuffer
    // Touched only on the channel's event loop.
    var framer = LineFramer()
    let continuation: AsyncStream<LineFramer.Frame>.Continuation
    let backpressure: ReadBackpressure
    let connection: ClientConnection?
    let ledger: ConnectionLimits.Ledger?
    let idleTimeout: Duration
    let logger: Logger?
    /// Bytes of the unfinished line counted in the ledger.
    var unfinished = 0
    var lastRead = NIODeadline.now()
    var idleCheck: Scheduled<Void>?
    /// Closed for holding too much of an unfinished line: what still arrives is dropped.
    var refused = false

    init(continuation: AsyncStream<LineFramer.Frame>.Continuation, backpressure: ReadBackpressure,
         connection: ClientConnection? = nil, ledger: ConnectionLimits.Ledger? = nil, idleTimeout: Duration = .seconds(60), logger: Logger? = nil) {
        self.continuation = continuation
        self.backpressure = backpressure
        self.connection = connection
        self.ledger = ledger
        self.idleTimeout = idleTimeout
        self.logger = logger
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        scheduleIdleCheck(channel: context.channel, after: idleTimeout)
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        lastRead = .now()
        let buffer = Self.unwrapInboundIn(data)
        let frames = buffer.withUnsafeReadableBytes { framer.feed($0) }
        if let ledger {
            let now = framer.bufferedByteCount
            let within = ledger.unfinishedLineChanged(from: unfinished, to: now)
            unfinished = now
            if !within {
                refuseUnfinishedLine(context: context, limit: ledger.limits.maxUnfinishedLineBytes)
                return
            }
        }
        guard !frames.isEmpty else { return }
        backpressure.linesQueued(frames.count)
        for frame in frames { continuation.yield(frame) }
    }

    /// All connections together hold too much of unfinished lines, and this one's just grew: its
    /// half line is dropped, the memory given back, and the connection closed with a reason.
    func refuseUnfinishedLine(context: ChannelHandlerContext, limit: Int) {
        refused = true
        _ = framer.finish()
        releaseUnfinished()
        logger?.warning("connection closed: unfinished lines of all clients over max_unfinished_line_bytes", metadata: [
            "peer": "\(connection?.credentials.description ?? "?")", "limit": "\(limit)",
        ])
        let line = DaemonMessage.error(id: nil, code: .badRequest, message: "the daemon holds \(limit) bytes of unfinished lines from all clients (max_unfinished_line_bytes); your line is dropped and the connection closed: send whole lines, each ended by a newline").encodedLine()
        var buffer = context.channel.allocator.buffer(capacity: line.count)
        buffer.writeBytes(line)
        let channel = context.channel
        context.writeAndFlush(NIOAny(buffer)).whenComplete { _ in channel.close(promise: nil) }
        channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
    }

    /// Gives the unfinished line's bytes back to the ledger, and memory back to the kernel when
    /// enough was freed (glibc keeps freed memory otherwise: 250 half lines of 1 MiB stayed resident).
    func releaseUnfinished() {
        guard let ledger else { return }
        let released = unfinished
        _ = ledger.unfinishedLineChanged(from: unfinished, to: 0)
        unfinished = 0
        if released > 0, ledger.buffersReleased(released) {
            _ = docroute_release_free_memory()
        }
    }

    /// Closes a connection that sent nothing for `idleTimeout`, has no request in hand and has
    /// not subscribed: a subscribed handler may wait as long as it likes for documents.
    func scheduleIdleCheck(channel: any Channel, after delay: Duration) {
        guard connection != nil else { return }
        let timeout = TimeAmount.nanoseconds(idleTimeout.components.seconds * 1_000_000_000 + idleTimeout.components.attoseconds / 1_000_000_000)
        let wait = TimeAmount.nanoseconds(delay.components.seconds * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000)
        idleCheck = channel.eventLoop.scheduleTask(in: wait) { [self] in
            guard let connection, !connection.isSubscribed, channel.isActive else { return }
            let idleFor = NIODeadline.now() - lastRead
            if idleFor >= timeout && backpressure.isIdle {
                logger?.debug("connection closed: idle without subscribing", metadata: ["peer": "\(connection.credentials)"])
                channel.close(promise: nil)
            } else {
                let next = idleFor >= timeout ? timeout : timeout - idleFor
                scheduleIdleCheck(channel: channel, after: .nanoseconds(next.nanoseconds))
            }
        }
    }

    package func channelWritabilityChanged(context: ChannelHandlerContext) {
        backpressure.writabilityChanged(context.channel.isWritable)
        context.fireChannelWritabilityChanged()
    }

    package func channelInactive(context: ChannelHandlerContext) {
        idleCheck?.cancel()
        idleCheck = nil
        releaseUnfinished()
        if let last = framer.finish() {
            backpressure.linesQueued(1)
            continuation.yield(last)
        }
        continuation.finish()
        context.fireChannelInactive()
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

/// Sends one error line to a connection over the cap, then closes it.
package final class RefusingHandler: ChannelInboundHandler, Sendable {
    package typealias InboundIn = ByteBuffer
    let line: [UInt8]

    init(line: [UInt8]) {
        self.line = line
    }

    package func channelActive(context: ChannelHandlerContext) {
        var buffer = context.channel.allocator.buffer(capacity: line.count)
        buffer.writeBytes(line)
        context.writeAndFlush(NIOAny(buffer)).whenComplete { [context] _ in context.close(promise: nil) }
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
}
