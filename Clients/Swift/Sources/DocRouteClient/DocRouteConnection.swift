import Foundation
import Logging
#if canImport(Glibc)
import Glibc
#endif
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
        let connection = DocRouteConnection(channel: channel.channel, socketPath: path, logger: logger)
        await connection.start(channel)
        logger.debug("connected to docrouted")
        return connection
    }

    /// The events for this connection once it has subscribed.
    public nonisolated let events: HandlerEvents

    /// The socket this connection was made to.
    public nonisolated let socketPath: String
    private let channel: any Channel
    private let logger: Logger
    /// The daemon's `welcome`, once asked for.
    private var welcome: DaemonWelcome?
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

    private init(channel: any Channel, socketPath: String, logger: Logger) {
        self.channel = channel
        self.socketPath = socketPath
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
        case .welcome, .subscribed, .opened, .candidates, .status, .released, .history, .redelivered:
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
        guard case .welcome(let version, let daemon, _, let features, let descriptorSocket) = reply else {
            throw unexpected(reply, for: "hello")
        }
        let welcome = DaemonWelcome(
            protocolVersion: version, daemon: daemon, features: Set(features),
            descriptorSocketPath: descriptorSocket.map { Self.resolve($0, besides: socketPath) })
        self.welcome = welcome
        return welcome
    }

    /// The daemon's `welcome`: the one already received, else asked for now.
    public func daemonWelcome() async throws(DocRouteClientError) -> DaemonWelcome {
        if let welcome { return welcome }
        return try await hello()
    }

    /// A `descriptorSocket` as the daemon gave it, relative to the folder of the main socket.
    static func resolve(_ descriptorSocket: String, besides socketPath: String) -> String {
        if descriptorSocket.hasPrefix("/") { return descriptorSocket }
        return ((socketPath as NSString).deletingLastPathComponent as NSString).appendingPathComponent(descriptorSocket)
    }

    /// Subscribes as the handler with this bundle identifier and returns how many documents are
    /// waiting for it. The `launch` event follows on ``events``.
    ///
    /// With `compete`, this connection becomes one of the handler's competing instances (the
    /// daemon's feature `compete`): each delivery goes to one of them, the one with the fewest in
    /// flight, and what one leaves unacknowledged goes to the others. Every connection of the
    /// handler must ask for it alike; otherwise the reply is `already-subscribed`.
    public func subscribe(bundleIdentifier: String, compete: Bool = false) async throws(DocRouteClientError) -> Int {
        let reply = try await request { id in .subscribe(id: id, bundleIdentifier: bundleIdentifier, compete: compete) }
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
    ///
    /// With `bundleIdentifier` the document goes to that handler instead (Open In…, feature
    /// `open-with`); it must be one of ``candidates(url:)``, else the daemon answers `no-handler`
    /// listing them.
    public func open(url: String, mailbox: String? = nil, bundleIdentifier: String? = nil) async throws(DocRouteClientError)
        -> OpenedDocument
    {
        let reply = try await request { id in .open(id: id, url: url, mailbox: mailbox, bundleIdentifier: bundleIdentifier) }
        return try opened(reply)
    }

    /// Opens a file by passing its open descriptor (feature `open-descriptor`): docrouted reads
    /// only from `fileDescriptor`, so it needs no right of its own to the file. `name` is the
    /// document's file name (its type is read from it and from the content). The descriptor
    /// stays the caller's: it is duplicated into the daemon, not closed here.
    ///
    /// Throws ``DocRouteClientError/Code/unexpectedReply`` when the daemon does not offer
    /// `open-descriptor` (an older docrouted): use ``open(url:mailbox:bundleIdentifier:)`` then.
    public func open(
        fileDescriptor: Int32, name: String, mailbox: String? = nil, bundleIdentifier: String? = nil
    ) async throws(DocRouteClientError) -> OpenedDocument {
        let message = ClientMessage.openDescriptor(id: "1", name: name, mailbox: mailbox, bundleIdentifier: bundleIdentifier)
        return try opened(try await passing(fileDescriptor, with: message))
    }

    /// Opens the file at `filePath` the way `docroutectl open` does: as an open descriptor passed
    /// to the daemon whenever it offers `open-descriptor` (so any file you can read can be opened,
    /// whatever user docrouted runs as), else by its `file://` URL. A relative path is taken from
    /// the current directory; a symbolic link you name is followed.
    public func open(filePath: String, mailbox: String? = nil, bundleIdentifier: String? = nil) async throws(DocRouteClientError)
        -> OpenedDocument
    {
        let path = Self.absolute(filePath)
        if try await offers(.openDescriptor) {
            let descriptor = try Self.openForReading(path)
            defer { _ = Glibc.close(descriptor) }
            return try await open(
                fileDescriptor: descriptor, name: (path as NSString).lastPathComponent, mailbox: mailbox,
                bundleIdentifier: bundleIdentifier)
        }
        return try await open(url: try Self.fileURL(path), mailbox: mailbox, bundleIdentifier: bundleIdentifier)
    }

    /// ``candidates(url:)`` for the file at `filePath`, passed as a descriptor whenever the daemon
    /// offers `open-descriptor` (see ``open(filePath:mailbox:bundleIdentifier:)``).
    public func candidates(filePath: String) async throws(DocRouteClientError) -> CandidateList {
        let path = Self.absolute(filePath)
        if try await offers(.openDescriptor) {
            let descriptor = try Self.openForReading(path)
            defer { _ = Glibc.close(descriptor) }
            return try await candidates(fileDescriptor: descriptor, name: (path as NSString).lastPathComponent)
        }
        return try await candidates(url: try Self.fileURL(path))
    }

    static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }

    static func fileURL(_ path: String) throws(DocRouteClientError) -> String {
        do {
            return try FileURL.string(forAbsolutePath: path)
        } catch {
            throw DocRouteClientError(code: .fileNotOpened, message: "\(path): \(error.message)", cause: error)
        }
    }

    /// `O_NONBLOCK` keeps a FIFO from blocking the open; the daemon refuses anything but a regular file.
    static func openForReading(_ path: String) throws(DocRouteClientError) -> Int32 {
        var descriptor: Int32
        repeat {
            descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        } while descriptor < 0 && errno == EINTR
        guard descriptor >= 0 else {
            let code = errno
            throw DocRouteClientError(
                code: .fileNotOpened,
                message: code == ENOENT ? "\(path) does not exist"
                    : code == EACCES ? "you cannot read \(path), so docrouted will not read it for you"
                    : "\(path) cannot be opened: \(String(cString: strerror(code)))")
        }
        return descriptor
    }

    /// Every handler that could open the document at `url` (a file or a custom-scheme URL), best
    /// first, as Mail's "Open In…" list shows them (feature `candidates`). Nothing is copied.
    public func candidates(url: String) async throws(DocRouteClientError) -> CandidateList {
        let reply = try await request { id in .candidates(id: id, url: url) }
        return try candidateList(reply)
    }

    /// ``candidates(url:)`` for a file passed as an open descriptor (see
    /// ``open(fileDescriptor:name:mailbox:bundleIdentifier:)``).
    public func candidates(fileDescriptor: Int32, name: String) async throws(DocRouteClientError) -> CandidateList {
        try candidateList(try await passing(fileDescriptor, with: .candidatesDescriptor(id: "1", name: name)))
    }

    /// Whether the daemon offers a feature (asks for `welcome` once if needed).
    public func offers(_ feature: ProtocolFeature) async throws(DocRouteClientError) -> Bool {
        try await daemonWelcome().features.contains(feature.rawValue)
    }

    private func passing(_ fileDescriptor: Int32, with message: ClientMessage) async throws(DocRouteClientError) -> DaemonMessage {
        let welcome = try await daemonWelcome()
        guard welcome.features.contains(ProtocolFeature.openDescriptor.rawValue), let path = welcome.descriptorSocketPath else {
            throw DocRouteClientError(
                code: .unexpectedReply,
                message: "\(welcome.daemon) does not offer open-descriptor; open the file by its URL instead")
        }
        let reply = try await DescriptorPassing.exchange(socketPath: path, line: message.encodedLine(), descriptor: fileDescriptor)
        if case .error(let id, let code, let text) = reply {
            throw DocRouteClientError(code: .daemon(code), message: text, requestID: id)
        }
        return reply
    }

    private func opened(_ reply: DaemonMessage) throws(DocRouteClientError) -> OpenedDocument {
        guard case .opened(_, let deliveryID, let bundleIdentifier, let contentType) = reply else {
            throw unexpected(reply, for: "open")
        }
        return OpenedDocument(deliveryID: deliveryID, bundleIdentifier: bundleIdentifier, contentType: contentType)
    }

    private func candidateList(_ reply: DaemonMessage) throws(DocRouteClientError) -> CandidateList {
        guard case .candidates(_, let contentType, let candidates) = reply else { throw unexpected(reply, for: "candidates") }
        return CandidateList(contentType: contentType, candidates: candidates)
    }

    /// Documents' histories matching `query`, each a JSON object (feature `history`; root and
    /// the admin group).
    public func history(_ query: HistoryRequest) async throws(DocRouteClientError) -> [JSONValue] {
        try await historyReply(query).documents
    }

    /// Documents' histories matching `query`, and, from a host in a fleet, whether the fleet's part
    /// could be read (`{"host","readable","error"}`; nil from a host not in a fleet).
    public func historyReply(_ query: HistoryRequest) async throws(DocRouteClientError) -> (documents: [JSONValue], fleet: JSONValue?) {
        let reply = try await request { id in .history(id: id, query: query) }
        guard case .history(_, let documents, let fleet) = reply else { throw unexpected(reply, for: "history") }
        return (documents, fleet)
    }

    /// Sends acknowledged or declined deliveries to their handlers again (feature `redeliver`;
    /// root and the admin group): one result object per delivery.
    public func redeliver(_ deliveryIDs: [String], declined: Bool = false, bundleIdentifier: String? = nil) async throws(DocRouteClientError) -> [JSONValue] {
        let reply = try await request { id in .redeliver(id: id, deliveryIDs: deliveryIDs, declined: declined, bundleIdentifier: bundleIdentifier) }
        guard case .redelivered(_, let results) = reply else { throw unexpected(reply, for: "redeliver") }
        return results
    }

    /// Asks for the daemon's status.
    public func status() async throws(DocRouteClientError) -> StatusReport {
        let reply = try await request { id in .status(id: id) }
        guard case .status(_, let handlers, let inboxes, let extra) = reply else { throw unexpected(reply, for: "status") }
        return StatusReport(handlers: handlers, inboxes: inboxes, extra: extra)
    }

    /// Asks the daemon to deliver a quarantined mail attachment from its message (feature
    /// `release`): `path` is its quarantine entry; with `bundleIdentifier`, to that handler, which
    /// must be one of the part's candidates. For root and the admin group.
    public func release(quarantineEntry path: String, bundleIdentifier: String? = nil) async throws(DocRouteClientError) -> ReleasedPart {
        let reply = try await request { id in .release(id: id, path: path, bundleIdentifier: bundleIdentifier) }
        guard case .released(_, let path, let deliveryID, let bundle, let contentType) = reply else { throw unexpected(reply, for: "release") }
        return ReleasedPart(path: path, deliveryID: deliveryID, bundleIdentifier: bundle, contentType: contentType)
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
