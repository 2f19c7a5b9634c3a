import DocRoutePlatform
import DocRouteProtocol
import Logging
import Synchronization
import SystemPackage

/// The second listening socket, where clients pass open files with `SCM_RIGHTS` (`open-descriptor`).
///
/// Why a second socket: NIO's stream channels read with `read(2)`, and the kernel drops any
/// descriptor that arrives on a Unix stream socket read that way; NIO offers no `recvmsg` with
/// control messages for stream channels. So this socket is served by tasks that read with
/// `recvmsg` themselves, woken by ``SocketReadiness`` (one thread for all connections). The
/// protocol is the same as on the main socket (hello, open, candidates, status); only `subscribe`
/// and `ack` are refused, because a handler's event stream belongs on the main socket.
///
/// What a client can hold here is bounded, so no local user can exhaust the daemon's descriptors:
/// - the connections of ``ConnectionLimits`` (in all, per uid, and the room kept for root and
///   handlers' users), refused past that with `too-many-connections`;
/// - one passed descriptor per connection: a descriptor is taken only with the first byte of a
///   line, one per line, and anything else closes the connection (``DescriptorLineReader``);
/// - a connection with no complete line for the idle timeout is closed, however many bytes of an
///   unfinished line trickle in meanwhile.
///
/// States: `initial` → ``start(_:)`` → `running` → ``stop()`` → `finished`.
package actor DescriptorSocketServer {
    enum State {
        case initial
        /// Accepting on `listener`, served by `serving`; `boundFile` is the socket file this
        /// server made (nil when systemd passed the socket).
        case running(listener: FileDescriptor, serving: Task<Void, Never>, boundFile: UnixSocketFile?)
        case finished
    }

    /// A reply the client does not read within this long ends the connection.
    static let sendTimeout: Duration = .seconds(10)

    nonisolated let responder: any RequestResponder
    nonisolated let limits: ConnectionLimits
    nonisolated let ledger: ConnectionLimits.Ledger
    nonisolated let isHandlerUser: @Sendable (UInt32) -> Bool
    nonisolated let readiness: SocketReadiness
    nonisolated let refusals: RefusalLog
    nonisolated let logger: Logger
    /// Distinct from the main socket's connection ids (which count up from 1).
    nonisolated let nextID = Mutex<UInt64>(1 << 48)
    nonisolated let boundPath = Mutex<String?>(nil)
    var state = State.initial

    /// Starts the poller's thread; the socket is bound by ``start(_:)``.
    package init(responder: any RequestResponder, limits: ConnectionLimits,
                 isHandlerUser: @escaping @Sendable (UInt32) -> Bool = { _ in false }, logger: Logger) throws(Errno) {
        self.responder = responder
        self.limits = limits
        self.ledger = ConnectionLimits.Ledger(limits: limits)
        self.isHandlerUser = isHandlerUser
        self.readiness = try SocketReadiness(logger: logger)
        self.refusals = RefusalLog(logger: logger, what: "descriptor socket")
        self.logger = logger
    }

    /// The descriptor socket's path beside the main socket: `docroute.sock` → `docroute.fd.sock`.
    package static func path(besides socket: String) -> String {
        socket.hasSuffix(".sock") ? String(socket.dropLast(5)) + ".fd.sock" : socket + ".fd"
    }

    /// Where the socket listens, when it is a path.
    package nonisolated var path: String? { boundPath.withLock { $0 } }

    /// Binds (or adopts) the socket and starts accepting. A server starts once.
    package func start(_ endpoint: SocketServer.Endpoint) throws {
        guard case .initial = state else {
            throw LifecycleError(message: "the descriptor socket server was started already; a server starts once: make a new one")
        }
        let listener: FileDescriptor
        var boundFile: UnixSocketFile?
        switch endpoint {
        case .descriptor(let passed):
            listener = FileDescriptor(rawValue: passed)
            boundPath.withLock { $0 = listener.boundUnixPath() }
        case .path(let path):
            (listener, boundFile) = try Self.bind(path)
            boundPath.withLock { $0 = path }
        }
        // Accepting waits for readiness, never in accept(2): a connection that goes away between
        // the two must not block the accepting task. systemd's socket (Accept=no) is only ever
        // accepted here, so its shared O_NONBLOCK flag changes nothing for systemd.
        try DeliveryError.performing("set O_NONBLOCK on", path ?? "the descriptor socket") { try listener.setNonBlocking() }
        let serving = Task { await self.serve(listener) }
        state = .running(listener: listener, serving: serving, boundFile: boundFile)
    }

    /// Stops accepting and ends every connection (a request being answered is answered first),
    /// then removes the socket file if this server made it and it is still the one it made.
    package func stop() async {
        guard case .running(let listener, let serving, let boundFile) = state else {
            state = .finished
            return
        }
        state = .finished
        serving.cancel()
        await serving.value
        readiness.stop()
        readiness.forget(listener)
        listener.closeIgnoringErrors()
        if let boundFile { boundFile.removeIfStillOurs() }
    }

    /// Binds a new socket at `path`, replacing a socket file an earlier run left (as the main
    /// socket's is); anyone may connect (authorization is by peer credentials).
    static func bind(_ path: String) throws -> (FileDescriptor, UnixSocketFile?) {
        try SocketServer.removeStaleSocket(at: path)
        let listener = try DeliveryError.performing("socket", path) { try FileDescriptor.unixStreamSocket(nonBlocking: true) }
        do {
            try DeliveryError.performing("bind", path) {
                try listener.bind(unixPath: path)
                try listener.listen(backlog: 64)
            }
            let file = UnixSocketFile(boundAt: path)
            try DeliveryError.performing("chmod", path) { try file?.allowEveryone() }
            return (listener, file)
        } catch {
            listener.closeIgnoringErrors()
            throw error
        }
    }

    /// Accepts until cancelled, each connection a child task of one group; returns once the last
    /// connection has ended.
    nonisolated func serve(_ listener: FileDescriptor) async {
        await withDiscardingTaskGroup { group in
            while !Task.isCancelled {
                let accepted: FileDescriptor?
                do {
                    accepted = try listener.acceptConnection()
                } catch {
                    // EMFILE, ENFILE, ENOBUFS: the connection waits in the kernel's queue; try
                    // again shortly rather than spin on a listener that stays readable.
                    refusals.note("accept failed: \(error)", peer: nil)
                    guard (try? await Task.sleep(for: .milliseconds(100))) != nil else { break }
                    continue
                }
                guard let socket = accepted else {
                    guard await readiness.wait(for: .readable, on: listener, until: nil) == .ready else { break }
                    continue
                }
                let peer = (try? socket.peerCredentials()) ?? SocketServer.unknownPeer
                if let refusal = ledger.admit(peer, isHandlerUser: peer.uid != 0 && isHandlerUser(peer.uid)) {
                    refusals.note("connection refused: \(refusal)", peer: peer)
                    // A new connection's send buffer is empty: the line fits without waiting.
                    let line = DaemonMessage.error(id: nil, code: .tooManyConnections, message: refusal).encodedLine()
                    _ = try? socket.sendWithoutBlocking(line[...])
                    socket.closeIgnoringErrors()
                    continue
                }
                let id = nextID.withLock { next in
                    defer { next += 1 }
                    return next
                }
                group.addTask { await self.serveConnection(socket, id: id, peer: peer) }
            }
        }
    }
}
