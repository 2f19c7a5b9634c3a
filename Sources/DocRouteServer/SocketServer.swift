import DocRoutePlatform
import DocRouteProtocol
import Logging
import NIOCore
import NIOPosix
import Synchronization
import SystemPackage

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
///
/// The listener and every connection are `NIOAsyncChannel`s served by one task group: a
/// connection is one child task that reads its lines and answers them in order. Back-pressure is
/// NIO's: reading pauses while lines wait to be answered, and while the replies pile up unread.
///
/// States: `initial` → ``start(_:)`` → `running` → ``stop()`` (the listener closes; open
/// connections go on) → `shuttingDown` → ``closeConnections()`` → `finished`.
package actor SocketServer {
    /// Running, it is ``Listening``; shutting down, the listener is closed and connections
    /// already open are still served by the task that serves them.
    typealias State = Lifecycle<Listening, Task<Void, Never>>

    /// Accepting: the listening channel, the task serving it and its connections, and the
    /// socket file this server bound (the only one it may remove; nil when systemd passed it).
    struct Listening {
        var listener: any Channel
        var serving: Task<Void, Never>
        var boundFile: UnixSocketFile?
    }

    /// What an accepted connection became in the child channel's initializer.
    enum Accepted: Sendable {
        case admitted(NIOAsyncChannel<ByteBuffer, ByteBuffer>, PeerCredentials)
        /// Over a limit: it is sent its error line and closed by ``RefusingHandler``.
        case refused
    }

    /// Connection ids, counted up from 1.
    struct Counters {
        var nextID: UInt64 = 1
    }

    nonisolated let group: any EventLoopGroup
    nonisolated let responder: any RequestResponder
    nonisolated let limits: ConnectionLimits
    nonisolated let ledger: ConnectionLimits.Ledger
    /// Whether a uid is one that a registered handler runs as (it may use the reserved connections).
    nonisolated let isHandlerUser: @Sendable (UInt32) -> Bool
    nonisolated let logger: Logger
    nonisolated let counters = Mutex(Counters())
    nonisolated let refusals: RefusalLog
    var state = State.initial

    package init(group: any EventLoopGroup, responder: any RequestResponder, limits: ConnectionLimits,
                isHandlerUser: @escaping @Sendable (UInt32) -> Bool = { _ in false }, logger: Logger) {
        self.group = group
        self.responder = responder
        self.limits = limits
        self.ledger = ConnectionLimits.Ledger(limits: limits)
        self.isHandlerUser = isHandlerUser
        self.logger = logger
        self.refusals = RefusalLog(logger: logger, what: "main socket")
    }

    /// Where the socket comes from.
    package enum Endpoint: Sendable {
        /// Bind this path (a stale socket file left by a crash is replaced, one another daemon still
        /// serves is not; the mode lets handler users connect).
        case path(String)
        /// Adopt a bound, listening descriptor (systemd's `docroute.socket`).
        case descriptor(Int32)
    }

    /// Starts accepting; returns once the socket listens. A server starts once.
    package func start(_ endpoint: Endpoint) async throws {
        guard case .initial = state else {
            throw LifecycleError(message: "the socket server was started already (it is \(state.name)); a server starts once: make a new one")
        }
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .childChannelOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 1024, initial: 16384, maximum: 65536))
        let initializer: @Sendable (any Channel) -> EventLoopFuture<Accepted> = { [self] channel in self.accept(channel) }
        let listener: NIOAsyncChannel<Accepted, Never>
        var boundFile: UnixSocketFile?
        switch endpoint {
        case .path(let path):
            try Self.removeStaleSocket(at: path)
            // Bound here, close-on-exec, rather than by NIO: a listening socket inherited by a
            // child (the crash backtracer outlives a crashed daemon) would still accept, and the
            // next daemon would take it for a live one.
            let descriptor = try Self.bindListening(path: path)
            boundFile = UnixSocketFile(boundAt: path)
            do {
                listener = try await bootstrap.bind(descriptor.rawValue, childChannelInitializer: initializer)
                try boundFile?.allowEveryone()
            } catch {
                descriptor.closeIgnoringErrors()
                boundFile?.removeIfStillOurs()
                throw error
            }
        case .descriptor(let fd):
            listener = try await bootstrap.bind(fd, childChannelInitializer: initializer)
        }
        let serving = Task { await self.serve(listener) }
        state = .running(Listening(listener: listener.channel, serving: serving, boundFile: boundFile))
    }

    /// Accepts until the listener closes, each connection a child task of one group; returns
    /// once the last connection has ended.
    nonisolated func serve(_ listener: NIOAsyncChannel<Accepted, Never>) async {
        do {
            try await listener.executeThenClose { accepted in
                await withDiscardingTaskGroup { group in
                    do {
                        for try await connection in accepted {
                            guard case .admitted(let channel, let credentials) = connection else { continue }
                            group.addTask { await self.serve(channel, credentials: credentials) }
                        }
                    } catch {
                        // The listener failed (or the task was cancelled): open connections go on.
                        self.logger.debug("socket: accepting ended: \(error)")
                    }
                }
            }
        } catch {
            logger.debug("socket: the listener could not be closed: \(error)")
        }
    }

    /// The file system path a bound Unix socket descriptor listens on, or nil (not a Unix socket,
    /// or an abstract one). With socket activation this, not the configuration, is where handlers
    /// must connect.
    package static func boundPath(of descriptor: Int32) -> String? {
        SystemPackage.FileDescriptor(rawValue: descriptor).boundUnixPath()
    }

    /// Stops accepting and closes the listening socket (open connections go on until
    /// ``closeConnections()``), and removes the socket file if it is still the one this server
    /// bound: never one that another daemon bound since, nor one systemd passed. Stopping a
    /// server that is stopping or stopped already does nothing.
    package func stop() async {
        switch state {
        case .initial:
            state = .finished
        case .running(let running):
            state = .shuttingDown(running.serving)
            try? await running.listener.close()
            running.boundFile?.removeIfStillOurs()
        case .shuttingDown, .finished:
            break
        }
    }

    /// Ends every open connection (a request being answered is cancelled) and waits for them;
    /// the last step of a shutdown. Stops the server first if need be.
    package func closeConnections() async {
        await stop()
        guard case .shuttingDown(let serving) = state else { return }
        serving.cancel()
        await serving.value
        state = .finished
    }

    /// Open connections now.
    package nonisolated var openConnections: Int { ledger.openConnections }

    /// A Unix stream socket bound to `path` and listening, close-on-exec and non-blocking.
    static func bindListening(path: String) throws -> SystemPackage.FileDescriptor {
        guard path.utf8.count <= SystemPackage.FileDescriptor.maximumSocketPathLength else {
            throw SocketServerError(code: .pathTooLong, message: "the socket path \(path) is longer than \(SystemPackage.FileDescriptor.maximumSocketPathLength) bytes; configure a shorter one")
        }
        let descriptor: SystemPackage.FileDescriptor
        do {
            descriptor = try SystemPackage.FileDescriptor.unixStreamSocket(nonBlocking: true)
        } catch {
            throw SocketServerError(code: .socketFailed, message: "a socket cannot be created: \(error)", cause: error)
        }
        do {
            try descriptor.bind(unixPath: path)
            try descriptor.listen(backlog: 256)
        } catch {
            descriptor.closeIgnoringErrors()
            throw SocketServerError(code: .bindFailed, message: "the socket \(path) cannot be bound: \(error); check that its folder exists and is writable", cause: error)
        }
        return descriptor
    }

    /// A socket file left at `path` by a daemon that is gone is removed; one that still accepts
    /// connections belongs to a live daemon and is left alone: starting fails instead.
    package static func removeStaleSocket(at path: String) throws {
        switch UnixSocketFile.removeStale(at: path) {
        case .absent, .removedStale:
            return
        case .notASocket:
            throw SocketServerError(code: .notASocket, message: "\(path) exists and is not a socket; remove it or configure another socket path")
        case .live:
            throw SocketServerError(code: .inUse, message: "another daemon serves the socket \(path); stop it first, or configure another socket path")
        }
    }

    /// On the event loop, before the connection is handed to the accepting task: reads the peer's
    /// credentials and takes a slot for it, or refuses it there and then, so a flood of
    /// connections over the limit costs no task.
    nonisolated func accept(_ channel: any Channel) -> EventLoopFuture<Accepted> {
        Self.peerCredentials(of: channel).flatMapThrowing { credentials in
            if let refusal = self.ledger.admit(credentials, isHandlerUser: credentials.uid != 0 && self.isHandlerUser(credentials.uid)) {
                self.refusals.note("connection refused: \(refusal)", peer: credentials)
                let line = DaemonMessage.error(id: nil, code: .tooManyConnections, message: refusal).encodedLine()
                // The channel is not active yet inside the initializer: refuse once it is.
                try channel.pipeline.syncOperations.addHandler(RefusingHandler(line: line))
                return .refused
            }
            // The slot is given back however the connection ends, served or not.
            channel.closeFuture.whenComplete { [ledger = self.ledger] _ in ledger.release(credentials) }
            let wrapped = try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
            return .admitted(wrapped, credentials)
        }
    }

    /// A peer whose credentials cannot be read is treated as nobody: it may connect but not act.
    static let unknownPeer = PeerCredentials(pid: 0, uid: UInt32.max - 1, gid: UInt32.max - 1)

    static func peerCredentials(of channel: any Channel) -> EventLoopFuture<PeerCredentials> {
        // SocketChannel is a SocketOptionProvider, the only way to the descriptor NIO keeps.
        guard let provider = channel as? any SocketOptionProvider else {
            return channel.eventLoop.makeSucceededFuture(unknownPeer)
        }
        let future: EventLoopFuture<PeerCredentials.SocketOptionValue> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(PeerCredentials.socketOptionLevel), name: SocketOptionName(PeerCredentials.socketOptionName))
        return future
            .map(PeerCredentials.init(socketOptionValue:))
            .recover { _ in unknownPeer }
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
        let channel = context.channel
        context.writeAndFlush(NIOAny(buffer)).whenComplete { _ in channel.close(promise: nil) }
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
}
