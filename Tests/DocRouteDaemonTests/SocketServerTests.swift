import DocRouteProtocol
import Foundation
import Logging
import NIOPosix
import Testing
@testable import DocRouteServer
#if canImport(Glibc)
import Glibc
#endif

/// The main socket's server on a real Unix socket in a temporary folder: what a client sends, what
/// it reads back, and when it is cut off.
@Suite("SocketServer")
struct SocketServerTests {
    /// Answers `hello` with a `welcome` that names the peer's uid and pid as the server saw them
    /// (SO_PEERCRED), and every other request with an error naming its type; records the closes.
    actor Responder: RequestResponder {
        var requests: [ClientMessage] = []
        var closed = 0
        /// A request of this type is answered only when released (a request in hand).
        var holding: String?
        var held: CheckedContinuation<Void, Never>?

        init(holding: String? = nil) {
            self.holding = holding
        }

        func respond(to message: ClientMessage, from connection: ClientConnection) async {
            requests.append(message)
            if message.type == holding {
                await withCheckedContinuation { held = $0 }
            }
            switch message {
            case .hello(_, let id):
                connection.send(.welcome(protocol: 1, daemon: "uid \(connection.credentials.uid) pid \(connection.credentials.pid)", id: id))
            default:
                connection.send(.error(id: message.id, code: .notFound, message: "answered \(message.type)"))
            }
        }

        func connectionClosed(_ connection: ClientConnection) async {
            closed += 1
        }

        func release() {
            held?.resume()
            held = nil
        }
    }

    /// A running server in a fresh folder, stopped and removed by `finish()`.
    struct Running {
        let server: SocketServer
        let responder: Responder
        let group: MultiThreadedEventLoopGroup
        let folder: String
        var path: String { folder + "/docroute.sock" }

        init(limits: ConnectionLimits = ConnectionLimits(maxConnections: 8), responder: Responder = Responder()) async throws {
            var template = Array("/tmp/docroute-socket-test.XXXXXX".utf8CString)
            guard let made = mkdtemp(&template) else { throw POSIXError(.EIO) }
            folder = String(cString: made)
            group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            self.responder = responder
            server = SocketServer(group: group, responder: responder, limits: limits, logger: Logger(label: "test"))
            try await server.start(.path(folder + "/docroute.sock"))
        }

        func finish() async throws {
            await server.closeConnections()
            try await group.shutdownGracefully()
            try? FileManager.default.removeItem(atPath: folder)
        }

        /// Polls until `condition` holds (the server counts a connection on its own event loop).
        func eventually(_ condition: () async -> Bool) async throws -> Bool {
            let deadline = ContinuousClock.now + LineClient.patience
            while ContinuousClock.now < deadline {
                if await condition() { return true }
                try await Task.sleep(for: .milliseconds(10))
            }
            return await condition()
        }
    }

    /// A client connection that reads whole lines. Its calls never block a thread (the tests share
    /// the cooperative pool with the server, and with other suites): they poll, and give up after
    /// thirty seconds, having tried once more after the deadline (the pool may be busy for long).
    final class LineClient: @unchecked Sendable {
        let descriptor: Int32
        var pending: [UInt8] = []

        init(_ path: String) throws {
            descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard descriptor >= 0 else { throw POSIXError(.EIO) }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
            }
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard connected == 0 else {
                close(descriptor)
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
        }

        deinit { close(descriptor) }

        /// Sends all of `text`, or stops when the server has closed.
        func write(_ text: String) async throws {
            let bytes = Array(text.utf8)
            var sent = 0
            let deadline = ContinuousClock.now + Self.patience
            while sent < bytes.count {
                let count = bytes[sent...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
                if count > 0 {
                    sent += count
                } else if count < 0, errno == EAGAIN || errno == EWOULDBLOCK, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(2))
                } else {
                    return
                }
            }
        }

        /// The next line without its newline; nil at the end of the stream (the server closed).
        func readLine() async throws -> String? {
            let deadline = ContinuousClock.now + Self.patience
            while true {
                if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    defer { pending.removeSubrange(...newline) }
                    return String(decoding: pending[..<newline], as: UTF8.self)
                }
                var buffer = [UInt8](repeating: 0, count: 65536)
                let count = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                if count > 0 {
                    pending += buffer[..<count]
                } else if count < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                    guard ContinuousClock.now < deadline else { throw TimedOut() }
                    try await Task.sleep(for: .milliseconds(2))
                } else {
                    return nil
                }
            }
        }

        /// Nothing came, and the connection stayed open.
        struct TimedOut: Error {}

        static let patience = Duration.seconds(30)

        /// The next line decoded as the daemon's message.
        func readMessage() async throws -> DaemonMessage? {
            guard let line = try await readLine() else { return nil }
            return try DaemonMessage(decoding: Array(line.utf8))
        }
    }

    @Test("a request line in, its JSON reply line out, from the peer the kernel names")
    func requestAndReply() async throws {
        let running = try await Running()
        let client = try LineClient(running.path)
        try await client.write(#"{"type":"hello","protocol":1,"id":"h1"}"# + "\n")
        let reply = try await client.readMessage()
        #expect(reply == .welcome(protocol: 1, daemon: "uid \(getuid()) pid \(getpid())", id: "h1"))
        // Two lines in one write are answered in order.
        try await client.write(#"{"type":"status","id":"s1"}"# + "\n" + #"{"type":"hello","protocol":1,"id":"h2"}"# + "\n")
        #expect(try await client.readMessage() == .error(id: "s1", code: .notFound, message: "answered status"))
        #expect(try await client.readMessage()?.id == "h2")
        // A line that is not a request is answered with the protocol's error, and the connection stays.
        try await client.write("not json\n")
        guard case .error(nil, .badRequest, _)? = try await client.readMessage() else {
            Issue.record("a bad line must be answered with bad-request")
            return
        }
        try await client.write(#"{"type":"hello","protocol":1,"id":"h3"}"# + "\n")
        #expect(try await client.readMessage()?.id == "h3")
        try await running.finish()
    }

    @Test("the socket file lets any local user connect, and stop removes it")
    func socketFileMode() async throws {
        let running = try await Running()
        var info = stat()
        #expect(lstat(running.path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o666)
        #expect(info.st_mode & S_IFMT == S_IFSOCK)
        await running.server.stop()
        #expect(lstat(running.path, &info) != 0)
        try await running.finish()
    }

    @Test("a server starts once")
    func startsOnce() async throws {
        let running = try await Running()
        let error = await #expect(throws: LifecycleError.self) {
            try await running.server.start(.path(running.folder + "/other.sock"))
        }
        #expect(error?.message == "the socket server was started already (it is running); a server starts once: make a new one")
        #expect(!FileManager.default.fileExists(atPath: running.folder + "/other.sock"))
        try await running.finish()
    }

    @Test("a live daemon's socket is not taken over")
    func liveSocketKept() async throws {
        let running = try await Running()
        #expect(throws: SocketServerError.self) { try SocketServer.removeStaleSocket(at: running.path) }
        let client = try LineClient(running.path)
        try await client.write(#"{"type":"hello","protocol":1}"# + "\n")
        #expect(try await client.readMessage() != nil)
        try await running.finish()
    }

    @Test("a connection over max_connections gets too-many-connections and is closed; a freed slot serves again")
    func connectionLimit() async throws {
        let running = try await Running(limits: ConnectionLimits(maxConnections: 2, reservedForHandlers: 0))
        var clients = try (0..<2).map { _ in try LineClient(running.path) }
        for client in clients {
            try await client.write(#"{"type":"hello","protocol":1}"# + "\n")
            #expect(try await client.readMessage() != nil)
        }
        let refused = try LineClient(running.path)
        let line = try await refused.readMessage()
        guard case .error(nil, .tooManyConnections, let message)? = line else {
            Issue.record("expected too-many-connections, got \(String(describing: line))")
            try await running.finish()
            return
        }
        #expect(message == (getuid() == 0
            ? "too many connections (2, max_connections); try again later"
            : "too many connections (2 for clients that are not handlers; 0 more are kept for handlers); try again later"))
        #expect(try await refused.readLine() == nil)
        clients.removeFirst()
        #expect(try await running.eventually { running.server.openConnections == 1 })
        let again = try LineClient(running.path)
        try await again.write(#"{"type":"hello","protocol":1,"id":"again"}"# + "\n")
        #expect(try await again.readMessage()?.id == "again")
        try await running.finish()
    }

    @Test("a half line then close: nothing is answered, the slot and the line's bytes are given back")
    func halfLineThenClose() async throws {
        let running = try await Running(limits: ConnectionLimits(maxConnections: 8, maxUnfinishedLineBytes: 100))
        do {
            let client = try LineClient(running.path)
            try await client.write(#"{"type":"hello","protocol":1,"id":"half-#"# + String(repeating: "x", count: 40))
            #expect(try await running.eventually { running.server.ledger.state.withLock { $0.unfinishedBytes } > 60 })
        }
        #expect(try await running.eventually { await running.responder.closed == 1 })
        #expect(running.server.openConnections == 0)
        #expect(running.server.ledger.state.withLock { $0.unfinishedBytes } == 0)
        #expect(await running.responder.requests.isEmpty)
        // The first client's 81 bytes are no longer held: another may hold as much again.
        let second = try LineClient(running.path)
        try await second.write(#"{"type":"hello","protocol":1,"id":""# + String(repeating: "y", count: 60))
        try await second.write("\"}\n")
        #expect(try await second.readMessage()?.id == String(repeating: "y", count: 60))
        try await running.finish()
    }

    @Test("unfinished lines over max_unfinished_line_bytes: the line is dropped with a reason and the connection closed")
    func unfinishedLinesOverLimit() async throws {
        let running = try await Running(limits: ConnectionLimits(maxConnections: 8, maxUnfinishedLineBytes: 100))
        let first = try LineClient(running.path)
        try await first.write(String(repeating: "a", count: 70))
        #expect(try await running.eventually { running.server.ledger.state.withLock { $0.unfinishedBytes } == 70 })
        let second = try LineClient(running.path)
        try await second.write(String(repeating: "b", count: 70))
        let reply = try await second.readMessage()
        #expect(reply == .error(id: nil, code: .badRequest, message: "the daemon holds 100 bytes of unfinished lines from all clients (max_unfinished_line_bytes); your line is dropped and the connection closed: send whole lines, each ended by a newline"))
        #expect(try await second.readLine() == nil)
        #expect(try await running.eventually { running.server.ledger.state.withLock { $0.unfinishedBytes } == 70 })
        try await running.finish()
    }

    @Test("a line over 1 MiB is refused and the connection closed")
    func lineTooLong() async throws {
        let running = try await Running(limits: ConnectionLimits(maxConnections: 8, maxUnfinishedLineBytes: 4 << 20))
        let client = try LineClient(running.path)
        // More than a line may hold, sent until the server closes (the sends then fail).
        let chunk = String(repeating: "z", count: 64 << 10)
        for _ in 0..<20 { try await client.write(chunk) }
        #expect(try await client.readMessage() == .error(id: nil, code: .badRequest, message: "line longer than \(WireProtocol.maximumLineLength) bytes; the connection is closed"))
        #expect(try await client.readLine() == nil)
        try await running.finish()
    }

    @Test("a connection idle past the timeout is closed unless a request is in hand")
    func idleClose() async throws {
        let responder = Responder(holding: "status")
        let running = try await Running(limits: ConnectionLimits(maxConnections: 8, idleTimeout: .milliseconds(300)), responder: responder)
        let busy = try LineClient(running.path)
        try await busy.write(#"{"type":"status","id":"slow"}"# + "\n")
        let idle = try LineClient(running.path)
        // The idle one is closed with nothing sent: the end of the stream.
        #expect(try await idle.readLine() == nil)
        // The busy one is still open long after the timeout, and gets its answer when released.
        try await Task.sleep(for: .milliseconds(600))
        #expect(running.server.openConnections == 1)
        await responder.release()
        #expect(try await busy.readMessage() == .error(id: "slow", code: .notFound, message: "answered status"))
        try await running.finish()
    }

    @Test("a listening descriptor passed in (socket activation) is served and its file left in place")
    func adoptedDescriptor() async throws {
        var template = Array("/tmp/docroute-socket-test.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw POSIXError(.EIO) }
        let folder = String(cString: made)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/passed.sock"
        let descriptor = try SocketServer.bindListening(path: path).rawValue
        #expect(SocketServer.boundPath(of: descriptor) == path)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = SocketServer(group: group, responder: Responder(), limits: ConnectionLimits(maxConnections: 4), logger: Logger(label: "test"))
        try await server.start(.descriptor(descriptor))
        let client = try LineClient(path)
        try await client.write(#"{"type":"hello","protocol":1,"id":"passed"}"# + "\n")
        #expect(try await client.readMessage()?.id == "passed")
        await server.closeConnections()
        #expect(FileManager.default.fileExists(atPath: path))
        try await group.shutdownGracefully()
    }
}
