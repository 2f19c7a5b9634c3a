import Logging
import NIOCore
import NIOPosix

/// Keeps a handler subscribed and feeds its delegate, like the system running an iOS app.
///
/// ``run()`` connects, says `hello`, subscribes, passes `launch` to
/// ``DocumentHandlerDelegate/didFinishLaunching(options:)`` and each `openURL` to
/// ``DocumentHandlerDelegate/open(document:)``, and acknowledges every document with the
/// delegate's answer. When the daemon goes away it connects again after a bounded exponential
/// backoff; unacknowledged documents then come again, so a delegate should drop a
/// `deliveryID` it has already seen.
///
/// The signature of ``run()`` matches swift-service-lifecycle's `Service`.
public struct DocumentHandlerRunner<Delegate: DocumentHandlerDelegate>: Sendable {
    /// The bundle identifier to subscribe as.
    public let bundleIdentifier: String
    /// Receives the documents.
    public let delegate: Delegate
    /// The daemon's socket; `nil` for ``DocRouteConnection/defaultSocketPath(environment:)``.
    public let socketPath: String?
    /// The waits between connection attempts.
    public let backoff: ReconnectBackoff
    private let eventLoopGroup: any EventLoopGroup
    private let logger: Logger

    /// Creates a runner.
    public init(
        bundleIdentifier: String,
        delegate: Delegate,
        socketPath: String? = nil,
        backoff: ReconnectBackoff = ReconnectBackoff(),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "docroute.handler")
    ) {
        self.bundleIdentifier = bundleIdentifier
        self.delegate = delegate
        self.socketPath = socketPath
        self.backoff = backoff
        self.eventLoopGroup = eventLoopGroup
        var logger = logger
        logger[metadataKey: "docroute.handler"] = "\(bundleIdentifier)"
        self.logger = logger
    }

    /// Runs until the task is cancelled (then returns) or the daemon refuses this handler for
    /// good (then throws): `unknown-handler`, `not-permitted`, `unsupported-protocol`,
    /// `bad-request`. Everything else is retried.
    public func run() async throws(DocRouteClientError) {
        var failures = 0
        while !Task.isCancelled {
            do {
                try await serveOneConnection(onSubscribed: { failures = 0 })
            } catch where Self.isFinal(error) {
                logger.error("docrouted refused the handler", metadata: ["error": "\(error)"])
                throw error
            } catch {
                logger.info("connection to docrouted lost; connecting again", metadata: ["error": "\(error)"])
            }
            failures += 1
            do {
                try await Task.sleep(for: backoff.delay(afterFailures: failures))
            } catch {
                break
            }
        }
    }

    static func isFinal(_ error: DocRouteClientError) -> Bool {
        switch error.code {
        case .daemon(.unknownHandler), .daemon(.notPermitted), .daemon(.unsupportedProtocol), .daemon(.badRequest):
            true
        default:
            false
        }
    }

    private func serveOneConnection(onSubscribed: () -> Void) async throws(DocRouteClientError) {
        let connection = try await DocRouteConnection.connect(
            socketPath: socketPath, eventLoopGroup: eventLoopGroup, logger: logger)
        do {
            let welcome = try await connection.hello()
            let pending = try await connection.subscribe(bundleIdentifier: bundleIdentifier)
            onSubscribed()
            logger.info(
                "subscribed", metadata: ["daemon": "\(welcome.daemon)", "pending": "\(pending)"])
            for try await event in connection.events {
                try await handle(event, on: connection)
            }
        } catch {
            await connection.close()
            throw error
        }
        await connection.close()
    }

    private func handle(_ event: HandlerEvent, on connection: DocRouteConnection) async throws(DocRouteClientError) {
        switch event {
        case .launch(let options):
            let handled = await delegate.didFinishLaunching(options: options)
            if let deliveryID = options.deliveryID {
                try await connection.acknowledge(deliveryID: deliveryID, handled: handled)
            }
        case .openURL(let document):
            let handled = await delegate.open(document: document)
            try await connection.acknowledge(deliveryID: document.deliveryID, handled: handled)
        case .daemonError(let error):
            logger.warning("docrouted reported an error", metadata: ["error": "\(error)"])
        }
    }
}
