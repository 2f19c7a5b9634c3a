import Foundation
import Logging
import NIOCore
import NIOPosix

/// One connection to `docrouted` over its Unix socket.
///
/// Requests (`hello`, `subscribe`, `open`, `status`) are sent with an `id` of the
/// connection's choosing and await the reply with that `id`; events for a subscribed handler
/// arrive on ``events`` in order. Call ``close()`` when done: the connection stays open until
/// either side closes it.
///
/// ```swift
/// let connection = try await DocRouteConnection.connect()
/// _ = try await connection.subscribe(bundleIdentifier: "com.sunsetlakesoftware.molecules")
/// for try await event in connection.events {
///     if case .openURL(let document) = event {
///         try await connection.acknowledge(deliveryID: document.deliveryID, handled: true)
///     }
/// }
/// ```
public actor DocRouteConnection {
    /// The socket path used when none is given: `$DOCROUTE_SOCKET` if set and not empty,
    /// otherwise `/run/docroute/docroute.sock`.
    public static func defaultSocketPath(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String {
        if let path = environment[WireProtocol.socketPathEnvironmentVariable], !path.isEmpty {
            return path
        }
        return WireProtocol.defaultSocketPath
    }

    /// Connects to the daemon.
    ///
    /// - Parameters:
    ///   - socketPath: The daemon's socket; `nil` for ``defaultSocketPath(environment:)``.
    ///   - eventLoopGroup: Where the socket's I/O runs.
    ///   - logger: Receives what the connection has to say; nothing is printed.
    public static func connect(
        socketPath: String? = nil,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "docroute.client")
    ) async throws(DocRouteClientError) -> DocRouteConnection {
        let path = socketPath ?? defaultSocketPath()
        var logger = logger
        logger[metadataKey: "docroute.socket"] = "\(path)"
        let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
        do {
            channel = try await ClientBootstrap(group: eventLoopGroup)
                // Events with large annotations arrive in few reads; lines are capped at 1 MiB anyway.
                .channelOption(
                    ChannelOptions.recvAllocator,
                    value: AdaptiveRecvByteBufferAllocator(minimum: 4096, initial: 65_536, maximum: 1 << 20)
                )
                .connect(unixDomainSocketPath: path) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw DocRouteClientError(
                code: .connectFailed,
                message: "cannot connect to docrouted at \(path): \(error); check that docroute.socket is active, "
                    + "or set \(WireProtocol.socketPathEnvironmentVariable) to the daemon's socket",
                cause: error)
        }
        let connection = DocRouteConnection(channel: channel.channel, logger: logger)
        await connection.start(channel)
        logger.debug("connected to docrouted")
        return connection
    }

    /// The events for this connection once it has subscribed.
    public nonisolated let events: HandlerEvents

    private let channel: any Channel
    private let logger: Logger
    private let eventSink: AsyncThrowingStream<HandlerEvent, any Error>.Continuation
    private var outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>?
    private var replies: [String: PendingReply] = [:]
    private var lastRequestNumber = 0
    private var endReason: DocRouteClientError?
    private var readerTask: Task<Void, Never>?

    /// A reply can arrive while its request is still being written, before anyone waits for it.
    private enum PendingReply {
        case awaited(CheckedContinuation<DaemonMessage, any Error>?)
        case arrived(Result<DaemonMessage, DocRouteClientError>)
    }

    private init(channel: any Channel, logger: Logger) {
        self.channel = channel
        self.logger = logger
        let (stream, sink) = AsyncThrowingStream.makeStream(of: HandlerEvent.self, throwing: (any Error).self)
        self.events = HandlerEvents(stream: stream)
        self.eventSink = sink
    }

    private func start(_ asyncChannel: NIOAsyncChannel<ByteBuffer, ByteBuffer>) async {
        await withCheckedContinuation { (ready: CheckedContinuation<Void, Never>) in
            readerTask = Task { await self.read(asyncChannel, ready: ready) }
        }
    }

    /// Reads lines until the connection ends; runs for the connection's whole life.
    private func read(_ asyncChannel: NIOAsyncChannel<ByteBuffer, ByteBuffer>, ready: CheckedContinuation<Void, Never>)
        async
    {
        var failure: (any Error)?
        do {
            try await asyncChannel.executeThenClose { inbound, outbound in
                self.outbound = outbound
                ready.resume()
                var framer = LineFramer()
                for try await buffer in inbound {
                    for frame in framer.feed(buffer.readableBytesView) {
                        self.receive(frame)
                    }
                }
                if let frame = framer.finish() { self.receive(frame) }
            }
        } catch {
            failure = error
        }
        connectionEnded(failure: failure)
    }

    private func receive(_ frame: LineFramer.Frame) {
        switch frame {
        case .line(let line):
            do {
                route(try DaemonMessage(decoding: line))
            } catch {
                logger.warning("ignoring a line from docrouted that is not a message this client reads",
                    metadata: ["error": "\(error)"])
            }
        case .lineTooLong:
            logger.warning("ignoring a line from docrouted longer than \(WireProtocol.maximumLineLength) bytes")
        case .incompleteLine(let bytes):
            logger.warning("docrouted closed the connection in the middle of a line",
                metadata: ["bytes": "\(bytes.count)"])
        }
    }

    private func route(_ message: DaemonMessage) {
        switch message {
        case .launch(let document):
            eventSink.yield(.launch(LaunchOptions(document: document)))
        case .openURL(let document):
            eventSink.yield(.openURL(document))
        case .error(let id, let code, let text):
            let error = DocRouteClientError(code: .daemon(code), message: text, requestID: id)
            if let id, replies[id] != nil {
                settle(id, with: .failure(error))
            } else {
                eventSink.yield(.daemonError(error))
            }
        case .welcome, .subscribed, .opened, .status:
            guard let id = message.id, replies[id] != nil else {
                logger.debug("ignoring a reply to no pending request", metadata: ["type": "\(message.type)"])
                return
            }
            settle(id, with: .success(message))
        }
    }

    private func settle(_ id: String, with result: Result<DaemonMessage, DocRouteClientError>) {
        switch replies[id] {
        case .awaited(let continuation?):
            replies[id] = nil
            continuation.resume(with: result.mapError { $0 as any Error })
        case .awaited(nil):
            replies[id] = .arrived(result)
        case .arrived, nil:
            break
        }
    }

    private func connectionEnded(failure: (any Error)?) {
        let reason =
            endReason
            ?? DocRouteClientError(
                code: .connectionClosed,
                message: "docrouted closed the connection" + (failure.map { ": \($0)" } ?? ""),
                cause: failure)
        let closedByUs = endReason != nil
        endReason = reason
        outbound = nil
        for id in replies.keys {
            settle(id, with: .failure(reason))
        }
        if closedByUs {
            eventSink.finish()
        } else {
            logger.info("connection to docrouted ended", metadata: ["reason": "\(reason.message)"])
            eventSink.finish(throwing: reason)
        }
    }

    /// Closes the connection. Pending requests fail with ``DocRouteClientError/Code/connectionClosed``
    /// and ``events`` ends without error.
    public func close() async {
        if endReason == nil {
            endReason = DocRouteClientError(code: .connectionClosed, message: "the connection was closed by the client")
        }
        outbound?.finish()
        try? await channel.close()
        await readerTask?.value
    }

    /// Sends `hello` and returns the daemon's `welcome`.
    public func hello(protocolVersion: Int = WireProtocol.version) async throws(DocRouteClientError) -> DaemonWelcome {
        let reply = try await request { id in .hello(protocol: protocolVersion, id: id) }
        guard case .welcome(let version, let daemon, _) = reply else { throw unexpected(reply, for: "hello") }
        return DaemonWelcome(protocolVersion: version, daemon: daemon)
    }

    /// Subscribes as the handler with this bundle identifier and returns how many documents are
    /// waiting for it. The `launch` event follows on ``events``.
    public func subscribe(bundleIdentifier: String) async throws(DocRouteClientError) -> Int {
        let reply = try await request { id in .subscribe(id: id, bundleIdentifier: bundleIdentifier) }
        guard case .subscribed(_, _, let pending) = reply else { throw unexpected(reply, for: "subscribe") }
        return pending
    }

    /// Acknowledges a delivery: `handled: true` when the handler took the document, `false`
    /// when it declined. An acknowledged delivery is never sent again.
    ///
    /// The daemon does not reply on success; a failure arrives later on ``events`` as
    /// ``HandlerEvent/daemonError(_:)`` with `requestID` `ack:<deliveryID>`.
    public func acknowledge(deliveryID: String, handled: Bool) async throws(DocRouteClientError) {
        try await send(.ack(deliveryID: deliveryID, handled: handled, id: "ack:\(deliveryID)"))
    }

    /// Routes a URL (custom scheme, or `file://` for a file copied like an inbox arrival) to
    /// its handler.
    public func open(url: String, mailbox: String? = nil) async throws(DocRouteClientError) -> OpenedDocument {
        let reply = try await request { id in .open(id: id, url: url, mailbox: mailbox) }
        guard case .opened(_, let deliveryID, let bundleIdentifier, let contentType) = reply else {
            throw unexpected(reply, for: "open")
        }
        return OpenedDocument(deliveryID: deliveryID, bundleIdentifier: bundleIdentifier, contentType: contentType)
    }

    /// Asks for the daemon's status.
    public func status() async throws(DocRouteClientError) -> StatusReport {
        let reply = try await request { id in .status(id: id) }
        guard case .status(_, let handlers, let inboxes, let extra) = reply else { throw unexpected(reply, for: "status") }
        return StatusReport(handlers: handlers, inboxes: inboxes, extra: extra)
    }

    private func unexpected(_ reply: DaemonMessage, for request: String) -> DocRouteClientError {
        DocRouteClientError(
            code: .unexpectedReply, message: "docrouted answered '\(request)' with '\(reply.type)'", requestID: reply.id)
    }

    private func request(_ message: (String) -> ClientMessage) async throws(DocRouteClientError) -> DaemonMessage {
        lastRequestNumber += 1
        let id = String(lastRequestNumber)
        replies[id] = .awaited(nil)
        do {
            try await send(message(id))
        } catch {
            replies[id] = nil
            throw error
        }
        do {
            return try await withCheckedThrowingContinuation { continuation in
                switch replies[id] {
                case .arrived(let result)?:
                    replies[id] = nil
                    continuation.resume(with: result.mapError { $0 as any Error })
                case .awaited?:
                    replies[id] = .awaited(continuation)
                case nil:
                    continuation.resume(throwing: endReason ?? DocRouteClientError(code: .connectionClosed, message: "the connection is closed"))
                }
            }
        } catch let error as DocRouteClientError {
            throw error
        } catch {
            throw DocRouteClientError(code: .connectionClosed, message: "the request failed: \(error)", cause: error)
        }
    }

    private func send(_ message: ClientMessage) async throws(DocRouteClientError) {
        guard let outbound, endReason == nil else {
            throw endReason ?? DocRouteClientError(code: .connectionClosed, message: "the connection is closed")
        }
        do {
            try await outbound.write(ByteBuffer(bytes: message.encodedLine()))
        } catch {
            throw DocRouteClientError(
                code: .connectionClosed, message: "cannot send '\(message.type)' to docrouted: \(error)",
                requestID: message.id, cause: error)
        }
    }
}
