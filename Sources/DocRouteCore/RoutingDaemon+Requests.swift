import DocRouteHandlers
import DocRouteProtocol
import DocRouteTypes
import Foundation

extension RoutingDaemon: RequestResponder {
    public func respond(to message: ClientMessage, from connection: ClientConnection) async {
        // Acknowledgements are written in the background; any other request first waits for them,
        // so what it reads (status counts, what a subscription is owed) already counts them.
        if case .ack = message {} else { await dispatcher.acknowledgementsWritten() }
        switch message {
        case .hello(let version, let id):
            if version == 1 {
                connection.send(.welcome(protocol: 1, daemon: Self.version, id: id))
            } else {
                connection.send(.error(id: id, code: .unsupportedProtocol, message: "protocol \(version) is not spoken here; docrouted speaks protocol 1"))
            }
        case .subscribe(let id, let bundleIdentifier):
            let registry = routing.withLockedValue { $0.registry }
            guard let handler = registry.handler(for: bundleIdentifier) else {
                connection.send(.error(id: id, code: .unknownHandler, message: "no registered handler is '\(bundleIdentifier)'"))
                return
            }
            guard Self.may(connection.credentials, actAs: handler) else {
                connection.send(.error(id: id, code: .notPermitted, message: "uid \(connection.credentials.uid) may not subscribe as \(handler.bundleIdentifier) (DocRouteUser is \(handler.manifest.user))"))
                return
            }
            if let error = await dispatcher.subscribe(handler, connection: connection, requestID: id) {
                connection.send(.error(error))
            } else {
                await launcher.subscribed(handler.bundleIdentifier)
            }
        case .ack(let deliveryID, let handled, let id):
            if let error = await dispatcher.acknowledge(deliveryID: deliveryID, handled: handled, connection: connection, requestID: id) {
                connection.send(.error(error))
            }
        case .open(let id, let url, let mailbox):
            await open(url: url, mailbox: mailbox, id: id, connection: connection)
        case .status(let id):
            guard Self.isAdministrator(connection.credentials, group: configuration.adminGroup) else {
                connection.send(.error(id: id, code: .notPermitted, message: "status is for root and members of the group '\(configuration.adminGroup ?? "(none configured)")'"))
                return
            }
            connection.send(await status(id: id))
        }
    }

    public func connectionClosed(_ connection: ClientConnection) async {
        await dispatcher.disconnected(connection)
    }

    func status(id: String?) async -> DaemonMessage {
        let registry = routing.withLockedValue { $0.registry }
        var handlers: [HandlerStatus] = []
        for handler in registry.handlers {
            // An indexed count (delivery_handler_state); everything else comes from memory.
            let pending = (try? await backend.owedCount(bundleIdentifier: handler.bundleIdentifier)) ?? 0
            var fields = activity.handlerFields(handler.bundleIdentifier)
            fields["inFlight"] = .integer(Int64(await dispatcher.inFlightCount(handler.bundleIdentifier)))
            handlers.append(HandlerStatus(
                bundleIdentifier: handler.bundleIdentifier, subscribed: await dispatcher.isSubscribed(handler.bundleIdentifier),
                pending: pending, extra: fields))
        }
        let folders = watcher.watchedFolders
        let inboxes = configuration.inboxes.enumerated().map { index, inbox in
            // A Maildir's `.Name` folder waiting for its `new/` is not a mailbox yet.
            let mailboxes = Set(folders.filter { $0.inbox == index && $0.role != .maildirFolder }.compactMap(\.mailbox))
                .subtracting([inbox.defaultMailbox])
            return InboxStatus(path: inbox.path, mailboxes: [inbox.defaultMailbox] + mailboxes.sorted(),
                        extra: activity.inboxFields(index).merging(["kind": .string(inbox.kind.rawValue)]) { $1 })
        }
        var extra = activity.statusFields()
        extra["failedManifests"] = .array(registry.failures.map { .string($0.error.description) })
        extra["deliveredSinceStart"] = .integer(Int64(await intake.deliveredCount))
        extra["daemon"] = .string(Self.version)
        // What `docroutectl default set` waits for: the defaults the daemon routes with now.
        let defaults = routing.withLockedValue { $0.defaults }
        extra["adminDefaults"] = .object([
            "types": .object(defaults.types.mapValues { .string($0) }),
            "schemes": .object(defaults.schemes.mapValues { .string($0) }),
        ])
        extra["quarantineDirectory"] = .string(configuration.quarantineDirectory)
        return .status(id: id, handlers: handlers, inboxes: inboxes, extra: extra)
    }

    func open(url: String, mailbox: String?, id: String?, connection: ClientConnection) async {
        let snapshot = routing.withLockedValue { $0 }
        guard let colon = url.firstIndex(of: ":"), URLSchemeClaim.isValidScheme(String(url[..<colon])) else {
            connection.send(.error(id: id, code: .badRequest, message: "'\(url)' is not an absolute URL (scheme:…)"))
            return
        }
        let scheme = url[..<colon].lowercased()
        guard scheme == "file" else {
            let selection = snapshot.selector.select(scheme: scheme)
            guard let bundle = selection.bundleIdentifier else {
                connection.send(.error(id: id, code: .noHandler, message: selection.reason))
                return
            }
            do {
                let (deliveryID, _) = try await backend.recordURL(url, bundleIdentifier: bundle, sourceApplication: nil)
                activity.committedURL(bundle)
                await intake.countOpened()
                connection.send(.opened(id: id, deliveryID: deliveryID, bundleIdentifier: bundle, contentType: nil))
                await dispatcher.committed(bundleIdentifier: bundle)
            } catch {
                connection.send(.error(id: id, code: .internal, message: "the URL could not be recorded: \(error)"))
            }
            return
        }
        let mailboxName = mailbox ?? "Shared"
        guard DaemonConfiguration.isValidMailbox(mailboxName) else {
            connection.send(.error(id: id, code: .badRequest, message: "'\(mailboxName)' cannot be a mailbox name"))
            return
        }
        let pathBytes: [UInt8]
        do {
            pathBytes = try FileURL.path(fromURLString: url)
        } catch {
            connection.send(.error(error))
            return
        }
        let path = InboxNames.display(pathBytes)
        let opened = PeerFileOpener.open(pathBytes, as: connection.credentials, maxSize: configuration.maxFileSize)
        let file: IntakeFile
        switch opened {
        case .success(let intake):
            file = intake
        case .failure(.vanished):
            connection.send(.error(id: id, code: .notFound, message: "\(path) does not exist"))
            return
        case .failure(.unreadable(let code)) where code == EACCES || code == EPERM:
            connection.send(.error(id: id, code: .notPermitted, message: "you (uid \(connection.credentials.uid)) cannot read \(path), so docrouted will not read it for you"))
            return
        case .failure(let refusal):
            connection.send(.error(id: id, code: .badRequest, message: "\(path): \(refusal)"))
            return
        }
        let name = Array(pathBytes.split(separator: UInt8(ascii: "/")).last ?? [])
        let display = InboxNames.display(name)
        let classification = snapshot.engine.classify(filename: display, head: file.head)
        guard let handler = snapshot.selector.chooseHandler(contentType: classification.contentType, innerContentType: classification.innerContentType) else {
            close(file.descriptor)
            connection.send(.error(id: id, code: .noHandler, message: "no handler claims \(classification.contentType)"))
            return
        }
        let delivery = DocumentDelivery(
            source: file, sourceFolder: nil, sourceName: name, sourcePath: path,
            containerRoot: handler.manifest.container ?? configuration.containersDirectory + "/" + handler.bundleIdentifier,
            mailbox: mailboxName, extensionChain: classification.extensionChain, contentType: classification.contentType,
            bundleIdentifier: handler.bundleIdentifier,
            owner: HandlerLauncher.copyOwner(for: handler.manifest.user),
            sourceApplication: "org.docroute.open",
            annotation: [:])
        let outcome = await backend.deliver([delivery]).first
        close(file.descriptor)
        activity.delivered([delivery], outcome.map { [$0] } ?? [])
        switch outcome {
        case .committed(let deliveryID, _, _, _):
            await intake.countOpened()
            connection.send(.opened(id: id, deliveryID: deliveryID, bundleIdentifier: handler.bundleIdentifier, contentType: classification.contentType))
            await dispatcher.committed(bundleIdentifier: handler.bundleIdentifier)
        case .failed(let message, _):
            connection.send(.error(id: id, code: .internal, message: "the file could not be delivered: \(message)"))
        case .alreadyDelivered(let deliveryID):
            connection.send(.opened(id: id, deliveryID: deliveryID, bundleIdentifier: handler.bundleIdentifier, contentType: classification.contentType))
        case nil:
            connection.send(.error(id: id, code: .internal, message: "the file could not be delivered"))
        }
    }

    /// The configured user, or root.
    static func may(_ peer: PeerCredentials, actAs handler: RegisteredHandler) -> Bool {
        if peer.uid == 0 { return true }
        switch handler.manifest.user {
        case .uid(let uid): return peer.uid == uid
        case .name(let name): return HandlerLauncher.resolve(.name(name))?.0 == peer.uid
        }
    }

    /// Root, or a member (primary or supplementary) of the administrators' group.
    static func isAdministrator(_ peer: PeerCredentials, group: String?) -> Bool {
        if peer.uid == 0 { return true }
        guard let group, let entry = getgrnam(group) else { return false }
        if peer.gid == entry.pointee.gr_gid { return true }
        guard let user = getpwuid(peer.uid), let members = entry.pointee.gr_mem else { return false }
        let name = String(cString: user.pointee.pw_name)
        var index = 0
        while let member = members[index] {
            if String(cString: member) == name { return true }
            index += 1
        }
        return false
    }
}
