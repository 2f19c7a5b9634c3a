import CDocRouteShim
import DocRoutePlatform
import DocRouteProtocol
import Foundation
import Logging
import Synchronization
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// The second listening socket, where clients pass open files with `SCM_RIGHTS` (`open-descriptor`).
///
/// Why a second socket: NIO's stream channels read with `read(2)`, and the kernel closes any
/// descriptor that arrives on a Unix stream socket read that way; NIO offers no `recvmsg` with
/// control messages for stream channels. So connections here are read by a thread of their own
/// with `recvmsg`, which receives the descriptor together with the first byte of its line. The
/// protocol is the same as on the main socket (hello, open, candidates, status); only `subscribe`
/// and `ack` are refused, because a handler's event stream belongs on the main socket.
///
/// A connection idle for ``idleTimeoutSeconds`` is closed, and at most `maxConnections` are
/// served at once, so clients cannot hold threads.
package final class DescriptorSocketServer: Sendable {
    let responder: any RequestResponder
    let maxConnections: Int
    let logger: Logger
    let state = Mutex(State())
    struct State {
        var listener: Int32 = -1
        var open = 0
        // Distinct from the main socket's connection ids (which count up from 1).
        var nextID: UInt64 = 1 << 48
        var stopped = false
        var path: String?
        /// Bound here (true) or passed by systemd (false, and shared with systemd's socket unit).
        var owned = false
    }

    /// A connection with no request for this long is closed.
    static let idleTimeoutSeconds = 30
    /// A reply the client does not read within this long ends the connection.
    static let sendTimeoutSeconds = 10

    package init(responder: any RequestResponder, maxConnections: Int, logger: Logger) {
        self.responder = responder
        self.maxConnections = maxConnections
        self.logger = logger
    }

    /// The descriptor socket's path beside the main socket: `docroute.sock` → `docroute.fd.sock`.
    package static func path(besides socket: String) -> String {
        socket.hasSuffix(".sock") ? String(socket.dropLast(5)) + ".fd.sock" : socket + ".fd"
    }

    /// Binds (or adopts) the socket and starts the accepting thread.
    package func start(_ endpoint: SocketServer.Endpoint) throws {
        let listener: Int32
        let path: String?
        switch endpoint {
        case .descriptor(let descriptor):
            listener = descriptor
            path = SocketServer.boundPath(of: descriptor)
        case .path(let bound):
            listener = try Self.bind(bound)
            path = bound
        }
        let owned: Bool
        if case .path = endpoint { owned = true } else { owned = false }
        state.withLock {
            $0.listener = listener
            $0.path = path
            $0.owned = owned
        }
        let thread = Thread { [self] in acceptLoop(listener) }
        thread.name = "docroute-fd-accept"
        thread.start()
    }

    /// Where the socket listens, when it is a path.
    package var path: String? { state.withLock { $0.path } }

    /// Stops accepting; open connections finish their current request.
    package func stop() {
        let (listener, path, owned) = state.withLock { state -> (Int32, String?, Bool) in
            state.stopped = true
            return (state.listener, state.path, state.owned)
        }
        guard listener >= 0 else { return }
        if owned {
            // Wakes the blocked accept(2) (EINVAL); the accepting thread closes the descriptor.
            Glibc.shutdown(listener, Int32(SHUT_RDWR))
        } else if let path {
            // systemd's socket: shutdown(2) would end it for systemd too (its socket unit fails and
            // nothing listens any more). A connection of our own wakes accept(2) instead.
            Self.connectOnce(to: path)
        }
    }

    /// Connects to `path` and closes at once (to wake an accept(2) blocked on it).
    static func connectOnce(to path: String) {
        let socket = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { return }
        defer { Glibc.close(socket) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    static func bind(_ path: String) throws -> Int32 {
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw DeliveryError(errno: Errno(rawValue: errno), operation: "socket", path: path) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            Glibc.close(listener)
            throw DeliveryError(errno: Errno(rawValue: ENAMETOOLONG), operation: "bind", path: path)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        // A socket file left by an earlier run is replaced, as the main socket's is.
        var info = stat()
        if lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFSOCK { unlink(path) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0, listen(listener, 64) == 0 else {
            let code = errno
            Glibc.close(listener)
            throw DeliveryError(errno: Errno(rawValue: code), operation: "bind", path: path)
        }
        // Authorization is by peer credentials and by what the passed descriptor allows.
        chmod(path, 0o666)
        return listener
    }

    func acceptLoop(_ listener: Int32) {
        while true {
            let connection = docroute_accept_cloexec(listener)
            if connection >= 0, state.withLock({ $0.stopped }) {
                // The wake-up connection of stop() (or one that came as it stopped).
                Glibc.close(connection)
                break
            }
            if connection < 0 {
                let code = errno
                if state.withLock({ $0.stopped }) { break }
                if code == EINTR || code == ECONNABORTED { continue }
                logger.warning("descriptor socket: accept failed: \(String(cString: strerror(code)))")
                // EMFILE and the like: let descriptors free up rather than spin.
                usleep(100_000)
                continue
            }
            let admitted: UInt64? = state.withLock { state in
                guard state.open < maxConnections else { return nil }
                state.open += 1
                defer { state.nextID += 1 }
                return state.nextID
            }
            guard let id = admitted else {
                let line = DaemonMessage.error(id: nil, code: .internal, message: "too many connections (\(maxConnections)); try again later").encodedLine()
                DescriptorSocketWriter(descriptor: connection).write(line)
                Glibc.close(connection)
                continue
            }
            let thread = Thread { [self] in
                serve(connection, id: id)
                state.withLock { $0.open -= 1 }
            }
            thread.name = "docroute-fd-conn"
            thread.start()
        }
        Glibc.close(listener)
    }

    func serve(_ socket: Int32, id: UInt64) {
        defer { Glibc.close(socket) }
        var credentials = docroute_peer_credentials()
        let peer = docroute_peer_credentials_get(socket, &credentials) == 0
            ? PeerCredentials(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid)
            : SocketServer.unknownPeer
        Self.setTimeout(socket, option: SO_RCVTIMEO, seconds: Self.idleTimeoutSeconds)
        Self.setTimeout(socket, option: SO_SNDTIMEO, seconds: Self.sendTimeoutSeconds)
        let connection = ClientConnection(id: id, credentials: peer, writer: DescriptorSocketWriter(descriptor: socket))
        var reader = DescriptorLineReader()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var descriptors = [Int32](repeating: -1, count: 8)
        reading: while true {
            var received: Int32 = 0
            var truncated: Int32 = 0
            let count = buffer.withUnsafeMutableBytes { bytes in
                descriptors.withUnsafeMutableBufferPointer { fds in
                    docroute_receive_with_descriptors(socket, bytes.baseAddress, bytes.count, fds.baseAddress, Int32(fds.count), &received, &truncated)
                }
            }
            if count < 0 {
                // EAGAIN: idle past SO_RCVTIMEO. Anything else: the peer is gone.
                break
            }
            let lines = reader.feed(buffer[..<count], descriptors: Array(descriptors[..<Int(received)]), truncated: truncated != 0)
            for line in lines {
                guard handle(line, on: connection) else { break reading }
            }
            if count == 0 { break }
        }
        reader.closeAll()
        let done = DispatchSemaphore(value: 0)
        Task {
            await responder.connectionClosed(connection)
            done.signal()
        }
        done.wait()
    }

    /// Answers one line; false when the connection must end.
    func handle(_ line: DescriptorLineReader.Line, on connection: ClientConnection) -> Bool {
        var descriptors = line.descriptors
        defer { for descriptor in descriptors { Glibc.close(descriptor) } }
        let bytes: [UInt8]
        switch line.frame {
        case .line(let content): bytes = content
        case .lineTooLong:
            connection.send(.error(id: nil, code: .badRequest, message: "line longer than \(WireProtocol.maximumLineLength) bytes; the connection is closed"))
            return false
        case .incompleteLine:
            return false
        }
        let message: ClientMessage
        do throws(ProtocolError) {
            message = try ClientMessage(decoding: bytes)
        } catch {
            connection.send(.error(error))
            return true
        }
        switch message {
        case .subscribe, .ack:
            connection.send(.error(id: message.id, code: .badRequest, message: "'\(message.type)' belongs on the main socket; this socket only takes hello, open, candidates and status"))
            return true
        default:
            break
        }
        if message.carriesDescriptor {
            guard descriptors.count == 1, !line.truncated else {
                connection.send(.error(id: message.id, code: .badRequest, message: "a \"descriptor\":true line needs exactly one descriptor passed with SCM_RIGHTS together with its first byte; \(line.truncated ? "too many" : String(descriptors.count)) came"))
                return true
            }
            connection.passedDescriptor.withLock { $0 = descriptors.removeFirst() }
        }
        let done = DispatchSemaphore(value: 0)
        let responder = self.responder
        Task {
            await responder.respond(to: message, from: connection)
            done.signal()
        }
        done.wait()
        if let unused = connection.takePassedDescriptor() { Glibc.close(unused) }
        return true
    }

    static func setTimeout(_ socket: Int32, option: Int32, seconds: Int) {
        var value = timeval(tv_sec: seconds, tv_usec: 0)
        _ = setsockopt(socket, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<timeval>.size))
    }
}
