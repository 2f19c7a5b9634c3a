import Crypto
import DocRouteConfiguration
import DocRouteHandlers
import DocRouteLedger
import DocRoutePlatform
import DocRouteProtocol
import DocRouteTypes
import Foundation
import Logging
import SystemPackage

/// `docrouted --recover-ledger`: sets a damaged ledger aside and builds a new one from what the
/// sandboxes hold.
///
/// 1. `ledger.sqlite` (with its `-wal` and `-shm`) is renamed to `ledger.sqlite.damaged-<time>`
///    (kept for inspection, never removed).
/// 2. The rows still readable from it are read (read-only), up to the first damaged page.
/// 3. Every document in every container's `Documents/Inbox/<mailbox>/` (files, and package
///    folders) is measured: path, size, digest (``DocumentDigest``). Containers are walked as
///    delivery walks them: from the container's root, one `openat(O_NOFOLLOW)` (or
///    `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`) at a time, so a link a handler put in
///    place of `Documents`, `Inbox`, a mailbox or a document is never followed into another
///    handler's container. One the old ledger names with the same path, size and digest keeps
///    its row (identifier, state: an acknowledged document stays acknowledged). Any other is owed
///    to its handler again (`committed`): at least once, a handler may hear of a document twice,
///    never of none.
/// 4. Custom-scheme URL deliveries still readable keep their rows.
///
/// The time is bounded (``Limits``), because the daemon cannot start meanwhile and a handler
/// decides what its sandbox holds: a document not digested within ``Limits/perFile`` is owed again
/// undigested; the documents left when ``Limits/total`` is spent are listed in
/// ``Pending/fileName`` and measured by the daemon after it starts
/// (``LedgerBackend/continueRebuild(committed:)``). Both are logged and printed by name.
///
/// The daemon must be stopped meanwhile.
package enum LedgerRebuild {
    /// How long the rebuild may take.
    package struct Limits: Sendable, Hashable {
        /// The time one document may take to be digested; past it, it is owed again undigested.
        package var perFile: Duration
        /// The time all documents may take; those left are measured by the daemon after it starts.
        package var total: Duration

        /// Creates limits; the defaults are 30 s a document (about 30 GB of data on a common
        /// disk) and 120 s in all.
        package init(perFile: Duration = .seconds(30), total: Duration = .seconds(120)) {
            self.perFile = perFile
            self.total = total
        }

        /// 30 s a document, 120 s in all.
        package static let `default` = Limits()
    }

    /// What a rebuild found and did.
    package struct Report: Sendable {
        /// Where the damaged files were moved (empty when there was no ledger).
        package var damagedFiles: [String] = []
        /// Rows read from the damaged ledger.
        package var salvagedRows = 0
        /// Whether the whole damaged ledger could be read.
        package var salvageComplete = true
        /// Documents found in the sandboxes.
        package var documents = 0
        /// Documents whose old row was found and kept (with its state).
        package var kept = 0
        /// Documents owed to their handlers again.
        package var owed = 0
        /// URL deliveries kept.
        package var urls = 0
        /// Entries that could not be read (path and why); they are not in the new ledger.
        package var unreadable: [String] = []
        /// Documents not digested within ``Limits/perFile``, owed again undigested (their paths).
        package var undigested: [String] = []
        /// Documents left for the daemon to measure after it starts (the total time was spent).
        package var deferred = 0
    }

    /// Runs the rebuild for `configuration`'s state directory and containers.
    package static func run(configuration: DaemonConfiguration, limits: Limits = .default, logger: Logger, now: Date = Date()) throws -> Report {
        let started = ContinuousClock.now
        var report = Report()
        let state = FilePath(configuration.stateDirectory)
        let path = state.appending(DeliveryLedger.fileName)
        var salvaged: [LedgerRecord] = []
        var aside: String?
        if FileManager.default.fileExists(atPath: path.string) {
            // `20261124T093000Z`: the basic form of RFC 3339's UTC time, safe in a file name.
            let damaged = path.string + ".damaged-" + UTCTimestamp(now).rfc3339.filter { $0 != "-" && $0 != ":" }
            for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path.string + suffix) {
                try DeliveryError.performing("set the damaged ledger aside as \(damaged + suffix)", path.string + suffix) {
                    try FilePath(path.string + suffix).rename(to: FilePath(damaged + suffix))
                }
                report.damagedFiles.append(damaged + suffix)
            }
            aside = damaged
            (salvaged, report.salvageComplete) = DeliveryLedger.salvage(FilePath(damaged))
            report.salvagedRows = salvaged.count
        }
        try DeliveryLedger.makeDirectory(state, mode: LedgerBackend.stateDirectoryMode(configuration))
        let ledger = try DeliveryLedger(path: path, replacingMissing: true, logger: logger)
        var closed = false
        defer { if !closed { try? ledger.close() } }

        let byPath = Self.byPath(salvaged)
        var records: [LedgerRecord] = salvaged.filter { $0.kind == .url && $0.state != .staged }
        report.urls = records.count
        var kept: [LedgerRecord] = []
        var owed: [(LedgerRecord, Int64)] = []
        var pending = Pending(damagedLedger: aside, perFileSeconds: Self.seconds(limits.perFile))

        let registry = HandlerDirectory(path: configuration.handlersDirectory).load(logger: logger)
        let engine = TypeEngine(catalog: registry.catalog, mimeDatabase: MIMEDatabase.loadSystemOrBuiltin())
        let totalDeadline = started + limits.total
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 4096)
        defer { buffer.deallocate() }
        for document in Self.documents(configuration: configuration, registry: registry, logger: logger, report: &report) {
            report.documents += 1
            let instant = ContinuousClock.now
            guard instant < totalDeadline else {
                pending.documents.append(document)
                continue
            }
            let ownDeadline = instant + limits.perFile
            let measured: Measured?
            do {
                measured = try measure(document, deadline: min(ownDeadline, totalDeadline), buffer: buffer)
            } catch let overTime as DocumentDigest.OverTime {
                if ContinuousClock.now >= totalDeadline && totalDeadline < ownDeadline {
                    // Cut off by the total, not by its own time: the daemon measures it later.
                    pending.documents.append(document)
                    continue
                }
                logger.warning("document not digested within the time one may take; it is owed to its handler again, undigested", metadata: [
                    "path": "\(document.path)", "seconds": "\(Self.seconds(limits.perFile))", "reason": "\(overTime)",
                ])
                report.undigested.append(document.path)
                measured = try? measure(document, deadline: nil, buffer: buffer, digesting: false)
            } catch {
                report.documents -= 1
                report.unreadable.append("\(document.path): \(error)")
                continue
            }
            guard let measured else {
                report.documents -= 1
                continue
            }
            switch Self.record(for: document, measured, byPath: byPath, engine: engine, now: now) {
            case .kept(let record): kept.append(record)
            case .owed(let record): owed.append((record, measured.status.modificationTimeNanoseconds))
            }
        }
        report.kept = kept.count
        report.owed = owed.count
        report.deferred = pending.documents.count
        // The list before the ledger: written after it, a crash between the two would leave the
        // deferred documents with neither a row nor a place on the list.
        try pending.save(in: state)
        // Old order first (their sequences), then the documents found anew, oldest first.
        records += kept
        records.sort { $0.sequence < $1.sequence }
        records += owed.sorted { $0.1 < $1.1 }.map(\.0)
        try ledger.rebuild(records)
        try ledger.close()
        closed = true
        giveToStateDirectoryOwner(path)
        if !pending.documents.isEmpty {
            logger.warning("the ledger rebuild's time was spent; the documents left are measured by the daemon after it starts", metadata: [
                "documents": "\(pending.documents.count)", "seconds": "\(Self.seconds(limits.total))",
                "list": "\(state.appending(Pending.fileName).string)",
            ])
        }
        logger.notice("ledger rebuilt from the sandboxes", metadata: [
            "documents": "\(report.documents)", "kept": "\(report.kept)", "owed": "\(report.owed)",
            "urls": "\(report.urls)", "damaged": "\(report.damagedFiles)", "undigested": "\(report.undigested.count)",
            "deferred": "\(report.deferred)",
        ])
        return report
    }

    /// `duration` in seconds.
    package static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// The readable file rows of a damaged ledger by their final path.
    static func byPath(_ salvaged: [LedgerRecord]) -> [String: LedgerRecord] {
        var byPath: [String: LedgerRecord] = [:]
        for record in salvaged where record.kind == .file && record.state != .staged {
            if let finalPath = record.finalPath { byPath[finalPath] = record }
        }
        return byPath
    }

    /// What a document found becomes in the new ledger.
    enum Rebuilt {
        /// Its old row, same path, size and digest, with its state.
        case kept(LedgerRecord)
        /// A new row, owed to its handler.
        case owed(LedgerRecord)
    }

    static func record(for document: Pending.Document, _ found: Measured, byPath: [String: LedgerRecord], engine: TypeEngine, now: Date) -> Rebuilt {
        if var record = byPath[document.path], record.size == found.status.size, let digest = found.sha256, record.sha256 == digest {
            record.finalDevice = found.status.device
            record.finalInode = found.status.inode
            record.temporaryPath = nil
            return .kept(record)
        }
        let classification = engine.classify(filename: document.name, head: found.head)
        return .owed(LedgerRecord(
            bundleIdentifier: document.bundle, kind: .file, mailbox: document.mailbox, originalName: document.name,
            extensionChain: classification.extensionChain, containerPath: document.container, finalPath: document.path,
            finalDevice: found.status.device, finalInode: found.status.inode,
            contentType: classification.contentType, size: found.status.size, sha256: found.sha256,
            annotation: DeliveryBatch.annotation(mailbox: document.mailbox, originalFilename: document.name, size: found.status.size, extra: nil),
            state: .committed, createdAt: now, committedAt: now))
    }

    /// Every container root and the bundle it belongs to: the folders of the containers
    /// directory, and the containers the manifests name.
    static func containers(configuration: DaemonConfiguration, registry: HandlerRegistry) -> [(root: String, bundle: String)] {
        var containers: [String: String] = [:]
        let names = (try? FileManager.default.contentsOfDirectory(atPath: configuration.containersDirectory)) ?? []
        for name in names.sorted() { containers[configuration.containersDirectory + "/" + name] = name }
        for handler in registry.handlers {
            containers[handler.manifest.container ?? configuration.containersDirectory + "/" + handler.bundleIdentifier] = handler.bundleIdentifier
        }
        return containers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// The documents of every container's `Documents/Inbox/<mailbox>/`, found without following
    /// a link: names only, nothing is read yet. Folders that cannot be opened (a link a handler
    /// put there among them) are noted in `report` and passed over.
    static func documents(configuration: DaemonConfiguration, registry: HandlerRegistry, logger: Logger, report: inout Report) -> [Pending.Document] {
        let writer = SandboxWriter()
        var documents: [Pending.Document] = []
        for (root, bundle) in containers(configuration: configuration, registry: registry) {
            let inbox: SandboxWriter.Folder
            do {
                inbox = try writer.openFolder(root: FilePath(root), components: ["Documents", "Inbox"], owner: nil, create: false)
            } catch let error as DeliveryError where error.code == .vanished {
                continue
            } catch {
                logger.warning("a container's Inbox is passed over: \(error)", metadata: ["container": "\(root)"])
                report.unreadable.append("\(root)/Documents/Inbox: \(error)")
                continue
            }
            defer { inbox.close() }
            let mailboxes: [FilePath.Component]
            do {
                mailboxes = try DeliveryError.performing("list folder", inbox.path.string) { try inbox.descriptor.directoryNames() }
            } catch {
                report.unreadable.append("\(inbox.path.string): \(error)")
                continue
            }
            for mailboxName in mailboxes.sorted(by: { $0.string < $1.string }) {
                // Only real folders: a link in Inbox is not a mailbox docrouted made.
                guard let mailbox = try? inbox.descriptor.open(mailboxName, .readOnly, options: [.directory]) else { continue }
                defer { mailbox.closeIgnoringErrors() }
                let folder = inbox.path.appending(mailboxName).string
                let names: [FilePath.Component]
                do {
                    names = try DeliveryError.performing("list folder", folder) { try mailbox.directoryNames() }
                } catch {
                    report.unreadable.append("\(folder): \(error)")
                    continue
                }
                for name in names.sorted(by: { $0.string < $1.string }) {
                    guard !SandboxWriter.isTemporaryName(name.string), !DeliveryBatch.isPackageTemporary(name.string) else { continue }
                    documents.append(Pending.Document(container: root, bundle: bundle, mailbox: mailboxName.string, name: name.string))
                }
            }
        }
        return documents
    }

    /// What was measured of a document.
    struct Measured {
        var status: FileStatus
        /// Nil when it was not digested (over its time).
        var sha256: String?
        var head: [UInt8]
    }

    /// A regular file's or a package folder's status, digest and first bytes, opened from its
    /// container's root without following a link; nil for anything else (links, FIFOs: never
    /// delivered by docrouted) and for a document gone meanwhile.
    /// - Throws: ``DocumentDigest/OverTime`` past `deadline`; ``DeliveryError`` when unreadable.
    static func measure(_ document: Pending.Document, deadline: ContinuousClock.Instant?, buffer: UnsafeMutableRawBufferPointer,
                        digesting: Bool = true) throws -> Measured? {
        let path = document.path
        let writer = SandboxWriter()
        let folder: SandboxWriter.Folder
        do {
            folder = try writer.openFolder(root: FilePath(document.container), components: ["Documents", "Inbox", document.mailbox], owner: nil, create: false)
        } catch let error as DeliveryError where error.code == .vanished {
            return nil
        }
        defer { folder.close() }
        guard let name = FilePath.Component(document.name) else { return nil }
        let file: FileDescriptor
        do throws(Errno) {
            file = try folder.descriptor.open(name, .readOnly, options: [.nonBlocking])
        } catch .tooManySymbolicLinkLevels, .noSuchFileOrDirectory {
            return nil
        } catch {
            throw DeliveryError(errno: error, operation: "read", path: path)
        }
        defer { file.closeIgnoringErrors() }
        var status = try DeliveryError.performing("inspect", path) { try file.status() }
        if status.isDirectory {
            guard digesting else { return Measured(status: status, sha256: nil, head: []) }
            let (size, sha256) = try PackageTree.digest(of: file.rawValue, describing: path, deadline: deadline)
            status.size = size
            return Measured(status: status, sha256: sha256, head: [])
        }
        guard status.isRegularFile else { return nil }
        let count = try DeliveryError.performing("read", path) {
            try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<4096]), atOffset: 0)
        }
        let head = Array(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        guard digesting else { return Measured(status: status, sha256: nil, head: head) }
        let sha256 = try DocumentDigest.sha256(of: file, size: status.size, describing: path,
                                               deadline: deadline ?? .now + .seconds(86_400 * 365), buffer: buffer)
        return Measured(status: status, sha256: sha256, head: head)
    }

    /// Run as root for a daemon that runs as its own user (the unit's `docroute`), the new ledger
    /// files would be root's and the service could not open them: they get the state
    /// directory's owner.
    static func giveToStateDirectoryOwner(_ path: FilePath) {
        guard ProcessIdentity.effectiveUserID == 0,
              let folder = try? path.removingLastComponent().status(followingSymbolicLinks: true), folder.userID != 0 else { return }
        let pending = path.removingLastComponent().appending(Pending.fileName).string
        for file in [path.string, path.string + "-wal", path.string + "-shm", DeliveryLedger.marker(path), pending] {
            // Best effort: a file that is not there (no -shm yet) has no owner to change.
            try? FilePath(file).changeOwnerOfLink(userID: folder.userID, groupID: folder.groupID)
        }
    }
}
