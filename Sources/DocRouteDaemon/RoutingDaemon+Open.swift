import DocRouteConfiguration
import DocRouteHandlers
import DocRouteIntake
import DocRoutePlatform
import DocRouteProtocol
import DocRouteServer
import DocRouteTypes
import Foundation
import NIOPosix
import Synchronization
import SystemPackage

/// `open` and `candidates` (PROTOCOL.md): a file named by URL or passed as a descriptor, or a
/// custom-scheme URL, routed to its handler or to the one the user picked (Open In…).
extension RoutingDaemon {
    /// Where a request's document comes from.
    enum DocumentSource {
        case url(String)
        /// Passed with `SCM_RIGHTS` on the descriptor socket; `name` is its file name.
        case descriptor(name: String)
    }

    /// A document file opened for a request: read only through `file.descriptor` from now on.
    struct RequestedFile {
        var file: IntakeFile
        var name: [UInt8]
        /// For messages and the ledger.
        var path: String
    }

    /// The `welcome` reply, naming the optional requests served.
    nonisolated func welcome(id: String?) -> DaemonMessage {
        var features = [ProtocolFeature.candidates.rawValue, ProtocolFeature.openWith.rawValue, ProtocolFeature.release.rawValue,
                        ProtocolFeature.history.rawValue, ProtocolFeature.redeliver.rawValue, ProtocolFeature.compete.rawValue]
        var descriptorSocket: String?
        if let path = descriptorSocketPath.withLock({ $0 }) {
            features.append(ProtocolFeature.openDescriptor.rawValue)
            // Relative to the main socket's folder when beside it, so it reads the same from any
            // mount namespace the client sees the folder in.
            let folder = (configuration.socket as NSString).deletingLastPathComponent
            descriptorSocket = (path as NSString).deletingLastPathComponent == folder ? (path as NSString).lastPathComponent : path
        }
        return .welcome(protocol: WireProtocol.version, daemon: Self.version, id: id, features: features, descriptorSocket: descriptorSocket)
    }

    /// Starts the descriptor socket; without it, `open-descriptor` is not offered and files are
    /// opened by URL only (which needs root unless client and daemon are the same user).
    func startDescriptorServer(_ endpoint: SocketServer.Endpoint?) async -> DescriptorSocketServer? {
        let path = DescriptorSocketServer.path(besides: configuration.socket)
        do {
            let server = try DescriptorSocketServer(
                responder: self, limits: .descriptorSocket(configuration),
                isHandlerUser: { [self] uid in handlerUsers.withLock { $0.uids.contains(uid) } }, logger: logger)
            try await server.start(endpoint ?? .path(path))
            descriptorSocketPath.withLock { $0 = server.path }
            return server
        } catch {
            logger.warning("the descriptor socket cannot be set up, so `open` of a file works only for users docrouted can read as: \(error)",
                           metadata: ["socket": "\(path)"])
            return nil
        }
    }

    nonisolated func open(_ source: DocumentSource, mailbox: String?, bundleIdentifier: String?, id: String?, connection: ClientConnection) async {
        let snapshot = routing.snapshot
        let uid = connection.credentials.uid
        // Every request counts against its uid's budget, answered or refused.
        if case .failure(let refusal) = openBudget.takeRequest(uid) {
            connection.discardPassedDescriptor()
            return refuseOverLimit(refusal.description, id: id, connection: connection)
        }
        if case .url(let url) = source {
            guard url.utf8.count <= configuration.maxURLLength else {
                connection.send(.error(id: id, code: .badRequest, message: "the URL is \(url.utf8.count) bytes, longer than the \(configuration.maxURLLength) docrouted takes (max_url_length); send a shorter one"))
                return
            }
            guard let scheme = Self.scheme(of: url, id: id, connection: connection) else { return }
            if scheme != "file" {
                await openCustomURL(url, scheme: scheme, bundleIdentifier: bundleIdentifier, snapshot: snapshot, id: id, connection: connection)
                return
            }
        }
        let mailboxName = mailbox ?? "Shared"
        guard DaemonConfiguration.isValidMailbox(mailboxName) else {
            connection.discardPassedDescriptor()
            connection.send(.error(id: id, code: .badRequest, message: "'\(mailboxName)' cannot be a mailbox name"))
            return
        }
        guard let requested = await requestedFile(source, id: id, connection: connection) else { return }
        let file = requested.file
        if case .failure(let refusal) = openBudget.takeBytes(uid, file.size) {
            file.closeDescriptor()
            return refuseOverLimit(refusal.description, id: id, connection: connection)
        }
        let route = snapshot.route(head: file.head, name: InboxNames.display(requested.name), pick: bundleIdentifier)
        let classification = route.classification
        let handler: RegisteredHandler
        switch route.handler {
        case .success(let chosen):
            handler = chosen
        case .failure(.notACandidate(let candidates)):
            file.closeDescriptor()
            connection.send(.error(id: id, code: .noHandler, message: Self.notACandidate(bundleIdentifier ?? "", of: classification.contentType, candidates: candidates)))
            return
        case .failure(.noHandler):
            file.closeDescriptor()
            connection.send(.error(id: id, code: .noHandler, message: "no handler claims \(classification.contentType)"))
            return
        }
        var delivery = snapshot.delivery(
            of: file, to: handler, classification: classification, sourceFolder: nil, sourceName: requested.name,
            sourcePath: requested.path, mailbox: mailboxName, sourceApplication: "org.docroute.open")
        delivery.requesterUID = openBudget.limits(uid) ? uid : nil
        // The same path as an inbox's file from here: delivered, reported, counted, the handler told.
        let outcome = await intake.deliverRequested(delivery)
        switch outcome {
        case .committed(let deliveryID, _, _, _):
            connection.send(.opened(id: id, deliveryID: deliveryID, bundleIdentifier: handler.bundleIdentifier, contentType: classification.contentType))
        case .failed(let error) where error.code == .overLimit:
            refuseOverLimit(error.message, id: id, connection: connection)
        case .failed(let error):
            connection.send(.error(id: id, code: .internal, message: "the file could not be delivered: \(error)"))
        case .alreadyDelivered(let deliveryID):
            connection.send(.opened(id: id, deliveryID: deliveryID, bundleIdentifier: handler.bundleIdentifier, contentType: classification.contentType))
        case nil:
            connection.send(.error(id: id, code: .internal, message: "the file could not be delivered"))
        }
    }

    nonisolated func openCustomURL(_ url: String, scheme: String, bundleIdentifier: String?, snapshot: RoutingSnapshot, id: String?, connection: ClientConnection) async {
        let selection = snapshot.selector.select(scheme: scheme)
        let bundle: String
        if let bundleIdentifier {
            guard let pick = selection.candidates.first(where: { $0.bundleIdentifier.lowercased() == bundleIdentifier.lowercased() }) else {
                connection.send(.error(id: id, code: .noHandler, message: Self.notACandidate(bundleIdentifier, of: "the URL scheme '\(scheme)'", candidates: selection.candidates)))
                return
            }
            bundle = pick.bundleIdentifier
        } else {
            guard let winner = selection.bundleIdentifier else {
                connection.send(.error(id: id, code: .noHandler, message: selection.reason))
                return
            }
            bundle = winner
        }
        let uid = connection.credentials.uid
        if case .failure(let refusal) = openBudget.takeBytes(uid, Int64(url.utf8.count)) {
            return refuseOverLimit(refusal.description, id: id, connection: connection)
        }
        do {
            let (deliveryID, _) = try await backend.recordURL(url, bundleIdentifier: bundle, sourceApplication: nil,
                                                              requesterUID: openBudget.limits(uid) ? uid : nil)
            activity.committedURL(bundle)
            await intake.countOpened()
            logger.info("delivered", metadata: [
                "message-id": "delivered", "delivery-id": "\(deliveryID.lowercased())", "bundle-id": "\(bundle)", "original-name": "\(url)",
            ])
            connection.send(.opened(id: id, deliveryID: deliveryID, bundleIdentifier: bundle, contentType: nil))
            await dispatcher.committed(bundleIdentifier: bundle)
        } catch let error as DeliveryError where error.code == .overLimit {
            refuseOverLimit(error.message, id: id, connection: connection)
        } catch {
            connection.send(.error(id: id, code: .internal, message: "the URL could not be recorded: \(error)"))
        }
    }

    /// Answers `over-limit` with what was passed and when to try again, and says so in the log at
    /// most once a second (a flood must not flood the journal too).
    nonisolated func refuseOverLimit(_ message: String, id: String?, connection: ClientConnection) {
        activity.refusedOverLimit()
        let now = ContinuousClock.now
        let logIt = overLimitLogged.withLock { last in
            guard last.map({ now - $0 >= .seconds(1) }) ?? true else { return false }
            last = now
            return true
        }
        if logIt {
            logger.notice("open refused: \(message)", metadata: ["uid": "\(connection.credentials.uid)", "pid": "\(connection.credentials.pid)"])
        }
        connection.send(.error(id: id, code: .overLimit, message: message))
    }

    /// `candidates`: every handler that could open the document, best first. Nothing is copied.
    nonisolated func candidates(for source: DocumentSource, id: String?, connection: ClientConnection) async {
        let snapshot = routing.snapshot
        if case .url(let url) = source {
            guard let scheme = Self.scheme(of: url, id: id, connection: connection) else { return }
            if scheme != "file" {
                let list = snapshot.selector.openInCandidates(scheme: scheme)
                connection.send(.candidates(id: id, contentType: nil, candidates: Self.wireCandidates(list, registry: snapshot.registry)))
                return
            }
        }
        guard let requested = await requestedFile(source, id: id, connection: connection) else { return }
        let classification = snapshot.engine.classify(filename: InboxNames.display(requested.name), head: requested.file.head)
        requested.file.closeDescriptor()
        let list = snapshot.selector.openInCandidates(contentType: classification.contentType, innerContentType: classification.innerContentType)
        connection.send(.candidates(id: id, contentType: classification.contentType, candidates: Self.wireCandidates(list, registry: snapshot.registry)))
    }

    /// Opens the request's file, as the client may read it, or answers with the error and returns nil.
    nonisolated func requestedFile(_ source: DocumentSource, id: String?, connection: ClientConnection) async -> RequestedFile? {
        switch source {
        case .descriptor(let name):
            guard connection.receivesDescriptors else {
                connection.send(.error(id: id, code: .badRequest, message: "descriptors are passed on the descriptor socket that welcome's descriptorSocket names; on this socket the kernel drops them"))
                return nil
            }
            guard let descriptor = connection.takePassedDescriptor() else {
                connection.send(.error(id: id, code: .badRequest, message: "a \"descriptor\":true line needs exactly one descriptor passed with SCM_RIGHTS; none came"))
                return nil
            }
            // fstat and the first read of a file that may be on a slow file system: on the pool.
            let maxSize = configuration.maxFileSize
            let maxAllocation = configuration.maxFileAllocation
            let adopted = (try? await threadPool.runIfActive { IntakeFile.adopt(descriptor: descriptor, maxSize: maxSize, maxAllocation: maxAllocation) })
                ?? .failure(.unreadable(errno: Errno.socketShutdown.rawValue))
            switch adopted {
            case .success(let file):
                return RequestedFile(file: file, name: Array(name.utf8), path: "\(name) (passed by pid \(connection.credentials.pid))")
            case .failure(let refusal):
                // Refused before anything was read through it: a failed close has nothing to add.
                FileDescriptor(rawValue: descriptor).closeIgnoringErrors()
                connection.send(.error(id: id, code: .badRequest, message: "\(name): \(refusal)"))
                return nil
            }
        case .url(let url):
            let pathBytes: [UInt8]
            do {
                pathBytes = try FileURL.path(fromURLString: url)
            } catch {
                connection.send(.error(error))
                return nil
            }
            let path = InboxNames.display(pathBytes)
            let peer = connection.credentials
            let ownUID = ProcessIdentity.effectiveUserID
            guard peer.uid == ownUID || ownUID == 0 else {
                // Without root docrouted cannot take the peer's identity to check what it may read.
                connection.send(.error(id: id, code: .notPermitted, message: "docrouted runs as uid \(ownUID) and cannot check that you (uid \(peer.uid)) may read \(path); pass the open file instead (open with \"descriptor\":true on the descriptor socket), as `docroutectl open` does"))
                return nil
            }
            switch await PeerFileOpener.open(pathBytes, as: peer, maxSize: configuration.maxFileSize, maxAllocation: configuration.maxFileAllocation) {
            case .success(let file):
                return RequestedFile(file: file, name: Array(pathBytes.split(separator: UInt8(ascii: "/")).last ?? []), path: path)
            case .failure(.vanished):
                connection.send(.error(id: id, code: .notFound, message: "\(path) does not exist"))
            case .failure(.unreadable(let code)) where code == Errno.permissionDenied.rawValue || code == Errno.notPermitted.rawValue:
                connection.send(.error(id: id, code: .notPermitted, message: "you (uid \(peer.uid)) cannot read \(path), so docrouted will not read it for you"))
            case .failure(let refusal):
                connection.send(.error(id: id, code: .badRequest, message: "\(path): \(refusal)"))
            }
            return nil
        }
    }

    static func scheme(of url: String) -> String? {
        guard let colon = url.firstIndex(of: ":"), URLSchemeClaim.isValidScheme(String(url[..<colon])) else { return nil }
        return url[..<colon].lowercased()
    }

    /// The URL's scheme, or nil after telling the client it is not an absolute URL.
    static func scheme(of url: String, id: String?, connection: ClientConnection) -> String? {
        guard let scheme = scheme(of: url) else {
            connection.send(.error(id: id, code: .badRequest, message: "'\(url)' is not an absolute URL (scheme:…)"))
            return nil
        }
        return scheme
    }

    static func notACandidate(_ bundleIdentifier: String, of subject: String, candidates: [HandlerCandidate]) -> String {
        guard !candidates.isEmpty else { return "\(bundleIdentifier) cannot open \(subject): no handler claims it" }
        return "\(bundleIdentifier) is not among the handlers that can open \(subject); pick one of: "
            + candidates.map(\.bundleIdentifier).joined(separator: ", ")
    }

    static func wireCandidates(_ list: [HandlerCandidate], registry: HandlerRegistry) -> [OpenCandidate] {
        list.enumerated().map { index, candidate in
            OpenCandidate(
                bundleIdentifier: candidate.bundleIdentifier,
                name: registry.handler(for: candidate.bundleIdentifier)?.manifest.name ?? candidate.bundleIdentifier,
                matchedType: candidate.matchedType, rank: candidate.rank.rawValue, role: candidate.role.rawValue,
                // The first is what `open` without bundleIdentifier picks (same order as select).
                isDefault: index == 0)
        }
    }
}
