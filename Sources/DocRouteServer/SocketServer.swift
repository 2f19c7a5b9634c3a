import CDocRouteShim
import DocRoutePlatform
import DocRouteProtocol
import Logging
import NIOCore
import NIOPosix
import Synchronization
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
///
/// The listener and every connection are `NIOAsyncChannel`s served by one task group: a
/// connection is one child task that reads its lines and answers them in order. Back-pressure is
/// NIO's: reading pauses while lines wait to be answered, and while the replies pile up unread.
///
/// States: `initial` → ``start(_:)`` → `running` → ``stop()`` (the listener closes; open
/// connections go on) → `shuttingDown` → ``closeConnections()`` → `finished`.
package actor SocketServer {
    enum State {
        case initial
        /// Accepting: the listening channel, the task serving it and its connections, and the
        /// socket file this server bound (the only one it may remove; nil when systemd passed it).
        case running(listener: any Channel, serving: Task<Void, Never>, boundFile: BoundFile?)
        /// The listener is closed; connections already open are still served.
        case shuttingDown(serving: Task<Void, Never>)
        case finished
    }

    /// A socket file by identity: a file another daemon bound at the same path since is not ours.
    struct BoundFile: Sendable {
        var path: String
        var device: UInt64
        var inode: UInt64
    }

    /// What an accepted connection became in the child channel's initializer.
    enum Accepted: Sendable {
        case admitted(NIOAsyncChannel<ByteBuffer, ByteBuffer>, PeerCredentials)
        /// Over a limit: it is sent its error line and closed by ``RefusingHandler``.
        case refused
    }

    /// Connection ids and the rate limit of refusal warnings, touched from the event loop.
    struct Counters {
        var nextID: UInt64 = 1
        var refusedSinceLog = 0
        var lastRefusalLog: ContinuousClock.Instant?
    }

    nonisolated let group: any EventLoopGroup
    nonisolated let responder: any RequestResponder
    nonisolated let limits: ConnectionLimits
    nonisolated let ledger: ConnectionLimits.Ledger
    /// Whether a uid is one that a registered handler runs as (it may use the reserved connections).
    nonisolated let isHandlerUser: @Sendable (UInt32) -> Bool
    nonisolated let logger: Logger
    nonisolated let counters = Mutex(Counters())
    var state = State.initial

    package init(group: any EventLoopGroup, responder: any RequestResponder, limits: ConnectionLimits,
                isHandlerUser: @escaping @Sendable (UInt32) -> Bool = { _ in false }, logger: Logger) {
        self.group = group
        self.responder = responder
        self.limits = limits
        self.ledger = ConnectionLimits.Ledger(limits: limits)
        self.isHandlerUser = isHandlerUser
        self.logger = logger
    }

    package init(group: any EventLoopGroup, responder: any RequestResponder, maxConnections: Int, logger: Logger) {
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

    /// Starts accepting; returns once the socket listens. A server starts once.
    package func start(_ endpoint: Endpoint) async throws {
        guard case .initial = state else {
            throw LifecycleError(message: "the socket server was started already (it is \(stateName)); a server starts once: make a new one")
        }
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .childChannelOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 1024, initial: 16384, maximum: 65536))
        let initializer: @Sendable (any Channel) -> EventLoopFuture<Accepted> = { [self] channel in self.accept(channel) }
        let listener: NIOAsyncChannel<Accepted, Never>
        var boundFile: BoundFile?
        switch endpoint {
        case .path(let path):
            try Self.removeStaleSocket(at: path)
            // Bound here, close-on-exec, rather than by NIO: a listening socket inherited by a
            // child (the crash backtracer outlives a crashed daemon) would still accept, and the
            // next daemon would take it for a live one.
            let descriptor = try Self.bindListening(path: path)
            do {
                listener = try await bootstrap.bind(descriptor, childChannelInitializer: initializer)
            } catch {
                close(descriptor)
                unlink(path)
                throw error
            }
            // Authorization is by peer credentials, so any local user may connect.
            chmod(path, 0o666)
            var info = stat()
            if lstat(path, &info) == 0 {
                boundFile = BoundFile(path: path, device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
            }
        case .descriptor(let fd):
            listener = try await bootstrap.bind(fd, childChannelInitializer: initializer)
        }
        let serving = Task { await self.serve(listener) }
        state = .running(listener: listener.channel, serving: serving, boundFile: boundFile)
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

    /// Stops accepting and closes the listening socket (open connections go on until
    /// ``closeConnections()``), and removes the socket file if it is still the one this server
    /// bound: never one that another daemon bound since, nor one systemd passed. Stopping a
    /// server that is stopping or stopped already does nothing.
    package func stop() async {
        switch state {
        case .initial:
            state = .finished
        case .running(let listener, let serving, let bound):
            state = .shuttingDown(serving: serving)
            try? await listener.close()
            if let bound {
                var info = stat()
                if lstat(bound.path, &info) == 0, UInt64(info.st_dev) == bound.device, UInt64(info.st_ino) == bound.inode {
                    unlink(bound.path)
                }
            }
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

    /// The state's name, for errors.
    var stateName: String {
        switch state {
        case .initial: "not started"
        case .running: "running"
        case .shuttingDown: "shutting down"
        case .finished: "stopped"
        }
    }

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

    /// On the event loop, before the connection is handed to the accepting task: reads the peer's
    /// credentials and takes a slot for it, or refuses it there and then, so a flood of
    /// connections over the limit costs no task.
    nonisolated func accept(_ channel: any Channel) -> EventLoopFuture<Accepted> {
        Self.peerCredentials(of: channel).flatMapThrowing { credentials in
            if let refusal = self.ledger.admit(credentials, isHandlerUser: credentials.uid != 0 && self.isHandlerUser(credentials.uid)) {
                self.logRefusal(refusal, peer: credentials)
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

    /// One warning a second at most, with the count refused since: a flood must not flood the journal.
    nonisolated func logRefusal(_ refusal: String, peer: PeerCredentials) {
        let refused: Int? = counters.withLock { counters in
            counters.refusedSinceLog += 1
            let now = ContinuousClock.now
            if let last = counters.lastRefusalLog, now - last < .seconds(1) { return nil }
            counters.lastRefusalLog = now
            defer { counters.refusedSinceLog = 0 }
            return counters.refusedSinceLog
        }
        if let refused {
            logger.warning("connection refused: \(refusal)", metadata: ["peer": "\(peer)", "refused": "\(refused)"])
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
