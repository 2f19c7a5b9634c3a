import DocRouteProtocol

/// One document to copy into a handler's sandbox, already opened, typed and routed.
public struct DocumentDelivery: Sendable {
    public var source: IntakeFile
    /// Where the source lives, to remove it once its copy is durable; nil to leave it (an `open` of
    /// a client's own file copies it and never touches the original).
    public var sourceFolder: Int32?
    public var sourceName: [UInt8]
    /// The source's path, for the ledger and logs.
    public var sourcePath: String
    public var containerRoot: String
    public var mailbox: String
    public var extensionChain: String
    public var contentType: String
    public var bundleIdentifier: String
    /// Owner of the copy (uid, gid); nil keeps the daemon's.
    public var owner: (uid: UInt32, gid: UInt32)?
    public var sourceApplication: String
    /// Entries beyond `mailbox`, `originalFilename` and `size`, which the delivery adds itself
    /// (an `originalFilename` given here wins: a mail part's name as the mail spelled it).
    public var annotation: [String: PropertyListValue]
    /// The name the copy takes (before the name rule); nil for the source's own name. A mail
    /// attachment's source is a scratch file, so its safe file name comes from here.
    public var fileName: String?
    /// For a mail attachment: the message's key (its Message-ID) and the part, so a restart after a
    /// crash never delivers the same part twice.
    public var messageID: String?
    public var partPath: String?

    public init(source: IntakeFile, sourceFolder: Int32?, sourceName: [UInt8], sourcePath: String, containerRoot: String,
                mailbox: String, extensionChain: String, contentType: String, bundleIdentifier: String,
                owner: (uid: UInt32, gid: UInt32)?, sourceApplication: String, annotation: [String: PropertyListValue],
                fileName: String? = nil, messageID: String? = nil, partPath: String? = nil) {
        self.source = source
        self.sourceFolder = sourceFolder
        self.sourceName = sourceName
        self.sourcePath = sourcePath
        self.containerRoot = containerRoot
        self.mailbox = mailbox
        self.extensionChain = extensionChain
        self.contentType = contentType
        self.bundleIdentifier = bundleIdentifier
        self.owner = owner
        self.sourceApplication = sourceApplication
        self.annotation = annotation
        self.fileName = fileName
        self.messageID = messageID
        self.partPath = partPath
    }
}

/// What became of one ``DocumentDelivery``.
public enum DocumentDeliveryOutcome: Sendable {
    /// Durable in the sandbox and in the ledger; the source is removed.
    case committed(deliveryID: String, finalPath: String, sequence: Int64, size: Int64)
    /// This very source was delivered and committed before (a crash had left it in its inbox);
    /// it was removed now instead of being delivered twice. Nothing new is owed.
    case alreadyDelivered(deliveryID: String)
    /// Not delivered; the source is where it was. The error keeps its code and cause for logs and
    /// status; ``isRetryable`` says whether to try again (a full disk or a permission problem an
    /// administrator can fix), not when the source went away.
    case failed(DeliveryError)
}

/// The durable half of the daemon: the ledger and the sandbox copies.
public protocol DeliveryBackend: DeliveryStore {
    /// Finishes or rolls back what a crash interrupted. Run before anything else.
    func recover() async throws
    /// Hands a batch over to be copied durably (group commit) and recorded, behind the batches
    /// handed over before it; the ticket gives its outcomes once it is committed.
    func submit(_ batch: [DocumentDelivery]) -> DeliveryTicket
    /// Copies a package document (a folder delivered whole) durably, records it, then removes
    /// its source tree from the inbox.
    func deliverPackage(_ package: DeliveryBatch.PackageRequest) async -> DocumentDeliveryOutcome
    /// Before a package is touched: marks it as in hand in the ledger (so that a crash while it
    /// is walked sets it aside at the next start) and says why it must be quarantined instead of
    /// delivered (it stopped the daemon before, or is deeper or larger than the limits), or nil.
    func vetPackage(name: [UInt8], in folder: Int32, path: String) async -> String?
    /// The intake is done with a package (delivered, quarantined or failed): its mark goes.
    func doneWithPackage(path: String) async
    /// Records a custom-scheme URL for a handler, committed at once.
    func recordURL(_ url: String, bundleIdentifier: String, sourceApplication: String?) async throws -> (deliveryID: String, sequence: Int64)
    /// Moves a source that cannot be delivered into the quarantine folder with a `.reason` file.
    func quarantine(name: [UInt8], in folder: Int32, mailbox: String, reason: String, origin: String) async throws
    /// The part paths of message `messageID` already delivered into `mailbox` (committed or later).
    func deliveredParts(messageID: String, mailbox: String) async throws -> Set<String>
    /// Returns once the work already handed to the backend (a batch's source removals) is done:
    /// the inbox folders it uses may be closed after that.
    func settle() async
    /// The ledger's counts per handler and state, read once at start to seed the in-memory
    /// counters that `status` and the metrics use; nil when there is no ledger to count.
    func ledgerStatistics() async -> DeliveryLedger.Statistics?
    /// Frees delivered sources that wait to be reclaimed, until cancelled (see ``SourceReclaimer``),
    /// reporting how many wait whenever that changes.
    func runReclamation(reporting report: @escaping @Sendable (Int) -> Void) async
    /// Delivered sources taken out of their inboxes and not yet freed.
    var sourcesToReclaim: Int { get }
}

extension DeliveryBackend {
    /// Copies a batch durably (group commit) and records it; returns once it is committed.
    public func deliver(_ batch: [DocumentDelivery]) async -> [DocumentDeliveryOutcome] {
        await submit(batch).outcomes
    }

    /// Returns once the work already handed to the backend (a batch's source removals) is done.
    public func settle() async {}

    /// Backends without a sandbox of their own deliver no packages; the package stays in its inbox.
    public func deliverPackage(_ package: DeliveryBatch.PackageRequest) async -> DocumentDeliveryOutcome {
        .failed(DeliveryError(code: .notRegularFile, message: "this delivery backend does not deliver package folders"))
    }

    public func ledgerStatistics() async -> DeliveryLedger.Statistics? { nil }

    /// Backends that remove sources at once have nothing to reclaim.
    public func runReclamation(reporting report: @escaping @Sendable (Int) -> Void) async {}

    public var sourcesToReclaim: Int { 0 }

    /// Backends without a ledger keep no marks and set no limits.
    public func vetPackage(name: [UInt8], in folder: Int32, path: String) async -> String? { nil }

    public func doneWithPackage(path: String) async {}
}
