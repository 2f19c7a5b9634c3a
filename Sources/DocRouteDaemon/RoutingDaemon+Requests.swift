import DocRouteHandlers
import DocRoutePlatform
import DocRouteProtocol
import DocRouteServer
import DocRouteTypes
import Foundation
import Synchronization

extension RoutingDaemon: RequestResponder {
    package nonisolated func respond(to message: ClientMessage, from connection: ClientConnection) async {
        // Acknowledgements are written in the background; any other request first waits for them,
        // so what it reads (status counts, what a subscription is owed) already counts them.
        if case .ack = message {} else { await dispatcher.acknowledgementsWritten() }
        switch message {
        case .hello(let version, let id):
            if version == 1 {
                connection.send(welcome(id: id))
            } else {
                connection.send(.error(id: id, code: .unsupportedProtocol, message: "protocol \(version) is not spoken here; docrouted speaks protocol 1"))
            }
        case .subscribe(let id, let bundleIdentifier, let compete):
            let registry = routing.snapshot.registry
            guard let handler = registry.handler(for: bundleIdentifier) else {
                connection.send(.error(id: id, code: .unknownHandler, message: "no registered handler is '\(bundleIdentifier)'"))
                return
            }
            guard may(connection.credentials, actAs: handler) else {
                connection.send(.error(id: id, code: .notPermitted, message: "uid \(connection.credentials.uid) may not subscribe as \(handler.bundleIdentifier) (DocRouteUser is \(handler.manifest.user))"))
                return
            }
            if let error = await dispatcher.subscribe(handler, connection: connection, requestID: id, compete: compete) {
                connection.send(.error(error))
            } else {
                connection.markSubscribed()
                await launcher.subscribed(handler.bundleIdentifier)
            }
        case .ack(let deliveryID, let handled, let id):
            if let error = await dispatcher.acknowledge(deliveryID: deliveryID, handled: handled, connection: connection, requestID: id) {
                connection.send(.error(error))
            }
        case .open(let id, let url, let mailbox, let bundleIdentifier):
            await open(.url(url), mailbox: mailbox, bundleIdentifier: bundleIdentifier, id: id, connection: connection)
        case .openDescriptor(let id, let name, let mailbox, let bundleIdentifier):
            await open(.descriptor(name: name), mailbox: mailbox, bundleIdentifier: bundleIdentifier, id: id, connection: connection)
        case .candidates(let id, let url):
            await candidates(for: .url(url), id: id, connection: connection)
        case .candidatesDescriptor(let id, let name):
            await candidates(for: .descriptor(name: name), id: id, connection: connection)
        case .status(let id):
            guard administrators.withLock({ $0 }).admits(connection.credentials) else {
                connection.send(.error(id: id, code: .notPermitted, message: "status is for root and members of the group '\(configuration.adminGroup ?? "(none configured)")'"))
                return
            }
            connection.send(await status(id: id))
        case .release(let id, let path, let bundleIdentifier):
            guard administrators.withLock({ $0 }).admits(connection.credentials) else {
                connection.send(.error(id: id, code: .notPermitted, message: "release is for root and members of the group '\(configuration.adminGroup ?? "(none configured)")'"))
                return
            }
            connection.send(await release(path, bundleIdentifier: bundleIdentifier, id: id))
        case .history(let id, let query):
            guard administrators.withLock({ $0 }).admits(connection.credentials) else {
                connection.send(.error(id: id, code: .notPermitted, message: "history is for root and members of the group '\(configuration.adminGroup ?? "(none configured)")'"))
                return
            }
            connection.send(await history(query, id: id))
        case .redeliver(let id, let deliveryIDs, let declined, let bundleIdentifier):
            guard administrators.withLock({ $0 }).admits(connection.credentials) else {
                connection.send(.error(id: id, code: .notPermitted, message: "redeliver is for root and members of the group '\(configuration.adminGroup ?? "(none configured)")'"))
                return
            }
            connection.send(await redeliver(deliveryIDs, declined: declined, bundleIdentifier: bundleIdentifier, id: id))
        }
    }

    package nonisolated func connectionClosed(_ connection: ClientConnection) async {
        await dispatcher.disconnected(connection)
    }

    nonisolated func status(id: String?) async -> DaemonMessage {
        let registry = routing.snapshot.registry
        // Read once for the `fleet` object and each handler's `hosts`.
        let fleetReading = await fleet?.status()
        var handlers: [HandlerStatus] = []
        for handler in registry.handlers {
            // An indexed count (delivery_handler_state); everything else comes from memory.
            let pending = (try? await backend.owedCount(bundleIdentifier: handler.bundleIdentifier)) ?? 0
            var fields = activity.handlerFields(handler.bundleIdentifier)
            fields["inFlight"] = .integer(Int64(await dispatcher.inFlightCount(handler.bundleIdentifier)))
            let instances = await dispatcher.instanceCount(handler.bundleIdentifier)
            if instances > 1 { fields["instances"] = .integer(Int64(instances)) }
            let subscribed = await dispatcher.isSubscribed(handler.bundleIdentifier)
            // In a fleet: the hosts where it has live instances, this one included.
            if let hosts = fleetReading?.hosts(of: handler.bundleIdentifier, subscribedHere: subscribed) {
                fields["hosts"] = .array(hosts.map { .string($0) })
            }
            handlers.append(HandlerStatus(
                bundleIdentifier: handler.bundleIdentifier, subscribed: subscribed,
                pending: pending, extra: fields))
        }
        let folders = watcher.watchedFolders
        let inboxes = configuration.servedInboxes.map { index, inbox in
            // A Maildir's `.Name` folder waiting for its `new/` is not a mailbox yet.
            let mailboxes = Set(folders.filter { $0.inbox == index && $0.role != .maildirFolder }.compactMap(\.mailbox))
                .subtracting([inbox.defaultMailbox])
            return InboxStatus(path: inbox.path, mailboxes: [inbox.defaultMailbox] + mailboxes.sorted(),
                        extra: activity.inboxFields(index).merging(["kind": .string(inbox.kind.rawValue)]) { $1 })
        }
        var extra = activity.statusFields()
        extra["failedManifests"] = .array(registry.failures.map { .string($0.error.description) })
        extra["deliveredSinceStart"] = .integer(Int64(await intake.deliveredCount))
        extra["sourcesToReclaim"] = .integer(Int64(backend.sourcesToReclaim))
        // The ledger's size on disk: what requests and unacknowledged deliveries make it grow by.
        extra["ledgerBytes"] = .integer(backend.ledgerBytesOnDisk)
        extra["daemon"] = .string(Self.version)
        // What `docroutectl default set` waits for: the defaults the daemon routes with now.
        let defaults = routing.snapshot.defaults
        extra["adminDefaults"] = .object([
            "types": .object(defaults.types.mapValues { .string($0) }),
            "schemes": .object(defaults.schemes.mapValues { .string($0) }),
        ])
        extra["quarantineDirectory"] = .string(configuration.quarantineDirectory)
        if let fleetReading { extra["fleet"] = fleetReading.json }
        let restart = keysNeedingRestart.withLock { $0 }
        if !restart.isEmpty { extra["needsRestart"] = .array(restart.map { .string($0) }) }
        return .status(id: id, handlers: handlers, inboxes: inboxes, extra: extra)
    }

    /// The configured user (as resolved at the last load), or root.
    nonisolated func may(_ peer: PeerCredentials, actAs handler: RegisteredHandler) -> Bool {
        if peer.uid == 0 { return true }
        return handlerUsers.withLock { $0.byBundle[handler.bundleIdentifier.lowercased()] } == peer.uid
    }
}
