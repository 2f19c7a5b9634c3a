import DocRouteProtocol
import DocRouteTestSupport
import Foundation
import NIOCore
import NIOPosix

/// A scripted stand-in for docrouted, listening on a Unix socket.
struct FakeDaemon: Sendable {
    let server: NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>

    /// Binds the socket; connections queue until ``serve(connections:script:)`` accepts them.
    static func listen(at path: String) async throws -> FakeDaemon {
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return FakeDaemon(server: server)
    }

    /// Accepts `connections` connections one after another, runs `script` on each and closes
    /// it, then stops listening.
    func serve(
        connections: Int = 1,
        script: @Sendable (FakeDaemonConnection) async throws -> Void
    ) async throws {
        try await server.executeThenClose { inbound in
            var served = 0
            for try await child in inbound {
                try await child.executeThenClose { childInbound, childOutbound in
                    let connection = FakeDaemonConnection(inbound: childInbound.makeAsyncIterator(), outbound: childOutbound)
                    try await script(connection)
                }
                served += 1
                if served == connections { break }
            }
        }
    }
}

extension FakeDaemon {
    /// Runs `body` with a socket path on which a fake daemon serves one connection with
    /// `script`, within ``withTimeout(seconds:_:)``; returns once both have ended.
    static func withConnection(
        serving script: @escaping @Sendable (FakeDaemonConnection) async throws -> Void,
        _ body: @escaping @Sendable (String) async throws -> Void
    ) async throws {
        try await withTemporarySocketPath { path in
            try await withTimeout {
                let daemon = try await FakeDaemon.listen(at: path)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await daemon.serve(script: script) }
                    try await body(path)
                    try await group.waitForAll()
                }
            }
        }
    }
}

struct FakeDaemonError: Error, CustomStringConvertible {
    let description: String
}

/// One accepted client, read line by line.
final class FakeDaemonConnection {
    private var inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    private var framer = LineFramer()
    private var lines: [String] = []

    init(inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator, outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>) {
        self.inbound = inbound
        self.outbound = outbound
    }

    /// The next line the client wrote, or `nil` when it closed the connection.
    func readLine() async throws -> String? {
        while lines.isEmpty {
            guard let buffer = try await inbound.next() else { return nil }
            for frame in framer.feed(buffer.readableBytesView) {
                guard case .line(let bytes) = frame else { throw FakeDaemonError(description: "unexpected \(frame)") }
                lines.append(String(decoding: bytes, as: UTF8.self))
            }
        }
        return lines.removeFirst()
    }

    /// The next line; the client closing instead is an error.
    func expectLine() async throws -> String {
        guard let line = try await readLine() else {
            throw FakeDaemonError(description: "the client closed the connection instead of writing a line")
        }
        return line
    }

    /// Sends a message as the daemon would.
    func send(_ message: DaemonMessage) async throws {
        try await outbound.write(ByteBuffer(bytes: message.encodedLine()))
    }

    /// Sends bytes exactly as given.
    func send(raw text: String) async throws {
        try await outbound.write(ByteBuffer(string: text))
    }
}

/// A new private directory for one test's socket, removed afterwards.
func withTemporarySocketPath<T: Sendable>(_ body: (String) async throws -> T) async throws -> T {
    try await TemporaryFolder.with("client") { folder in
        try await body(folder.string("docroute.sock"))
    }
}

struct TimedOut: Error {}

/// Runs `body`, failing instead of hanging when the protocol exchange stalls.
func withTimeout<T: Sendable>(seconds: Int = 20, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            throw TimedOut()
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}
