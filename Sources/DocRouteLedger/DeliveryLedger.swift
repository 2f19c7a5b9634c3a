import DocRoutePlatform
import Foundation
import GRDB
import Logging
import Synchronization
import SystemPackage

/// The durable record of every delivery: what is owed to which handler, in which order.
///
/// SQLite in WAL mode at `<state directory>/ledger.sqlite`, with `synchronous = FULL`: a
/// transaction is on disk when its commit returns. (`NORMAL` in WAL mode only syncs at checkpoints:
/// a power cut could then forget a commit after the source was already removed from its inbox,
/// and a file would sit in a sandbox that no handler is ever told about. A batch commits two or
/// three times whatever its size, so the flush per commit costs little.)
///
/// All methods block on SQLite; call them from a thread that may block. They throw
/// ``DeliveryError`` (`ledger`, or `noSpace` when the disk is full).
package final class DeliveryLedger: Ledger {
    /// The database file.
    package let path: FilePath
    let pool: DatabasePool
    let logger: Logger

    /// The file name below the state directory.
    package static let fileName = "ledger.sqlite"

    /// The ledger file's device and inode when it was opened, and its write-ahead log's.
    let identity: Mutex<(ledger: FileStatus?, log: FileStatus?)>
    /// What each handler is owed, kept beside the rows (see ``PendingTally``).
    package let pendingTally = PendingTally()
    /// Told when the ledger turns out damaged, gone or replaced while the daemon runs.
    let damageHandler = Mutex<(@Sendable (DeliveryError) -> Void)?>(nil)
    /// What commits need to keep the row id the commit order (see ``commit(_:_:at:staged:lastCommitted:owed:)``).
    let sequencing = Mutex(Sequencing())

    struct Sequencing {
        /// The ids of rows this ledger staged and has not committed or discarded yet.
        var staged: [UUID: Int64] = [:]
        /// The highest id committed so far (or, after a crash, staged: recovery then gives the
        /// rows it commits new ids, harmlessly).
        var lastCommitted: Int64 = 0
    }

    /// Opens (creating if needed) `<stateDirectory>/ledger.sqlite` and migrates it. A state
    /// directory created here gets `directoryMode` whatever the umask.
    package convenience init(stateDirectory: FilePath, directoryMode: CModeT = 0o700, logger: Logger) throws {
        try Self.makeDirectory(stateDirectory, mode: directoryMode)
        try self.init(path: stateDirectory.appending(Self.fileName), logger: logger)
    }

    /// Opens (creating if needed, mode 0600 whatever the umask) the ledger at `path`, migrates it
    /// and checks it (`PRAGMA quick_check`, and the write-ahead log's header before SQLite could
    /// drop a damaged one in silence).
    /// - Throws: ``DeliveryError`` `ledger-damaged`, with the steps to recover, when it is
    ///   damaged; `ledger` when it cannot be opened.
    ///
    /// A ledger that is missing where one was made before (its marker, or its `-wal`, is still
    /// there) is refused as damaged too, unless `replacingMissing` (``LedgerRebuild``).
    package init(path: FilePath, replacingMissing: Bool = false, logger: Logger) throws {
        self.path = path
        self.logger = logger
        self.identity = Mutex((nil, nil))
        do {
            if !replacingMissing { try Self.refuseIfRemoved(path) }
            try Self.prepareFiles(path)
            try Self.checkWriteAheadLog(path)
        } catch let error as DeliveryError {
            logger.critical("\(error.message)", metadata: ["code": "\(error.code.rawValue)", "path": "\(path.string)"])
            throw error
        }
        var configuration = Configuration()
        configuration.label = "DeliveryLedger"
        configuration.prepareDatabase { db in
            // SQLite's page cache, per connection: 256 KiB instead of its default 2,000 KiB. The
            // writer's filled up within 10,000 deliveries and was 2 MiB of the daemon's private
            // memory; a row's random-keyed index pages miss it either way, and the kernel's page
            // cache serves them. Measured: the same files/s (medians 6,766 and 6,757 at 10,000),
            // 2.0–2.4 MiB less at the peak (docs/BENCHMARKS.md, "Memory at 100,000 files").
            try db.execute(sql: "PRAGMA cache_size = -256")
        }
        // A reader never waits for the writer in WAL mode; writers wait for each other briefly.
        configuration.busyMode = .timeout(10)
        do {
            pool = try DatabasePool(path: path.string, configuration: configuration)
            // Set on the writer after the pool is made: GRDB's pool turns WAL on after
            // `prepareDatabase` and sets `synchronous = NORMAL` with it, which would leave every
            // commit unflushed until a checkpoint (readers write nothing and need no setting).
            try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
            try Self.migrator.migrate(pool)
            let problems = try pool.read { db in try String.fetchAll(db, sql: "PRAGMA quick_check") }
            if problems != ["ok"] {
                throw Self.damaged(path, "quick_check: \(problems.prefix(3).joined(separator: "; "))")
            }
            try loadPendingTally()
            let last = try pool.read { db in try Int64.fetchOne(db, sql: "SELECT MAX(id) FROM delivery") } ?? 0
            sequencing.withLock { $0.lastCommitted = last }
        } catch {
            var failure = Self.ledgerError("open the delivery ledger \(path.string)", error)
            if Self.isDamage(error) && failure.code != .ledgerDamaged {
                failure = Self.damaged(path, "\(error)")
            }
            logger.critical("\(failure.message)", metadata: ["code": "\(failure.code.rawValue)", "path": "\(path.string)"])
            throw failure
        }
        identity.withLock { $0 = (Self.fileStatus(path.string), Self.fileStatus(path.string + "-wal")) }
        Self.markCreated(path)
    }

    /// Creates the state directory with `mode` (and its parents), whatever the umask; one that
    /// exists keeps its mode (systemd's StateDirectoryMode= decides under the unit).
    package static func makeDirectory(_ directory: FilePath, mode: CModeT) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory.string, isDirectory: &isDirectory), isDirectory.boolValue { return }
        do {
            try FileManager.default.createDirectory(
                atPath: directory.string, withIntermediateDirectories: true,
                attributes: [.posixPermissions: mode])
            // createDirectory's mode goes through the umask: set it again.
            try directory.changeMode(mode)
        } catch {
            throw DeliveryError(
                code: .ledger,
                message: "Cannot create the state directory \(directory.string): \(error). Create it (systemd's StateDirectory= does) and make it writable for docrouted.",
                cause: error)
        }
    }

    // MARK: Errors

    package static func ledgerError(_ doing: String, _ error: any Error, file: String = #fileID, line: Int = #line) -> DeliveryError {
        if let error = error as? DeliveryError { return error }
        if isDamage(error) {
            return DeliveryError(
                code: .ledgerDamaged,
                message: "Could not \(doing): \(error). The delivery ledger is damaged or was moved away. \(DeliveryError.advice(for: .ledgerDamaged))",
                cause: error, file: file, line: line)
        }
        let code: DeliveryError.Code
        switch (error as? DatabaseError)?.resultCode {
        case .SQLITE_FULL?: code = .noSpace
        case .SQLITE_READONLY?: code = .readOnly
        default: return DeliveryError.wrapping(doing, error, file: file, line: line)
        }
        return DeliveryError(
            code: code,
            message: "Could not \(doing): \(error). \(DeliveryError.advice(for: code))",
            cause: error, file: file, line: line)
    }

    func write<T>(_ doing: String, file: String = #fileID, line: Int = #line, _ body: (Database) throws -> T) throws -> T {
        try reporting(doing, file: file, line: line) { try pool.write(body) }
    }

    func read<T>(_ doing: String, file: String = #fileID, line: Int = #line, _ body: (Database) throws -> T) throws -> T {
        try reporting(doing, file: file, line: line) { try pool.read(body) }
    }

    /// ``write(_:file:line:_:)`` for async callers: on GRDB's writer, the caller suspended.
    func writeAsync<T: Sendable>(_ doing: String, file: String = #fileID, line: Int = #line,
                                 _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await reporting(doing, file: file, line: line) { try await pool.write(body) }
    }

    /// ``read(_:file:line:_:)`` for async callers: on one of GRDB's readers, the caller suspended.
    func readAsync<T: Sendable>(_ doing: String, file: String = #fileID, line: Int = #line,
                                _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await reporting(doing, file: file, line: line) { try await pool.read(body) }
    }

    /// Runs one of GRDB's calls; what it throws becomes the ledger's error for `doing`, reported.
    private func reporting<T>(_ doing: String, file: String, line: Int, _ call: () throws -> T) throws -> T {
        do {
            return try call()
        } catch {
            throw reported(Self.ledgerError(doing, error, file: file, line: line))
        }
    }

    /// ``reporting(_:file:line:_:)`` for a call the caller awaits.
    private func reporting<T>(_ doing: String, file: String, line: Int, _ call: () async throws -> T) async throws -> T {
        do {
            return try await call()
        } catch {
            throw reported(Self.ledgerError(doing, error, file: file, line: line))
        }
    }

    /// Every ledger error is logged (a request answered `internal` says nothing to whoever reads
    /// the journal); a damaged ledger is reported to ``onDamage(_:)`` too.
    func reported(_ error: DeliveryError) -> DeliveryError {
        if error.code == .ledgerDamaged {
            logger.critical("the delivery ledger is damaged: \(error.message)", metadata: ["code": "\(error.code.rawValue)", "path": "\(path.string)"])
            damageHandler.withLock { $0 }?(error)
        } else {
            logger.error("ledger error: \(error.message)", metadata: ["code": "\(error.code.rawValue)", "path": "\(path.string)"])
        }
        return error
    }

    /// Sets what is told when the ledger turns out damaged, gone or replaced while it is in use
    /// (docrouted stops then: see ``LedgerWatch``).
    package func onDamage(_ handler: @escaping @Sendable (DeliveryError) -> Void) {
        damageHandler.withLock { $0 = handler }
    }

    // MARK: Handlers' side

    /// Committed, unacknowledged deliveries of a handler with a sequence above `sequence`, oldest
    /// first: what it is owed, in the order the copies were committed. Only what an event needs
    /// is read (``PendingEvent``): the dispatcher reads this once per quarter window.
    package func pendingEvents(bundleIdentifier: String, after sequence: Int64, limit: Int) throws -> [PendingEvent] {
        try read("read pending deliveries") { db in try pendingEvents(bundleIdentifier: bundleIdentifier, after: sequence, limit: limit, db) }
    }

    func pendingEvents(bundleIdentifier: String, after sequence: Int64, limit: Int, _ db: Database) throws -> [PendingEvent] {
        let statement = try db.cachedStatement(sql: """
            SELECT \(PendingEvent.columns) FROM delivery
            WHERE bundleIdentifier = ? AND acknowledgedAt IS NULL AND id > ? AND state = 'committed'
            ORDER BY id LIMIT ?
            """)
        let rows = try Row.fetchCursor(statement, arguments: [bundleIdentifier, sequence, limit])
        var events: [PendingEvent] = []
        while let row = try rows.next() {
            let kindText: String = row[2]
            guard let kind = LedgerRecord.Kind(rawValue: kindText) else {
                throw DeliveryError(code: .ledger, message: "The ledger row of \((row[1] as String).debugDescription) has kind \(kindText.debugDescription), which this docrouted does not know.")
            }
            events.append(PendingEvent(sequence: row[0], deliveryID: row[1], kind: kind, url: row[3], finalPath: row[4],
                                       contentType: row[5], mailbox: row[6], sourceApplication: row[7], annotation: row[8]))
        }
        return events
    }

    /// How many committed deliveries a handler has not acknowledged.
    package func pendingCount(bundleIdentifier: String) throws -> Int {
        try read("count pending deliveries") { db in try pendingCount(bundleIdentifier: bundleIdentifier, db) }
    }

    func pendingCount(bundleIdentifier: String, _ db: Database) throws -> Int {
        // Named, or SQLite (without statistics) would count through all of the handler's history.
        try Int.fetchOne(db, sql: """
            SELECT COUNT(*) FROM delivery INDEXED BY delivery_owed
            WHERE bundleIdentifier = ? AND acknowledgedAt IS NULL AND state = 'committed'
            """,
                         arguments: [bundleIdentifier]) ?? 0
    }

    /// Records that a handler took (`handled`) or declined deliveries, all in one transaction.
    ///
    /// - Returns: the ids that are unknown, not this handler's, or not yet committed (the protocol
    ///   answers `not-found` for those). Acknowledging an acknowledged delivery again changes
    ///   nothing and is not an error.
    @discardableResult
    package func acknowledge(deliveryIDs: [UUID], handled: Bool, bundleIdentifier: String, at date: Date = Date()) throws -> [UUID] {
        guard !deliveryIDs.isEmpty else { return [] }
        var taken: [PendingTally.Change] = []
        let unknown = try write("record acknowledgements") { db in
            taken.removeAll()
            return try acknowledge(deliveryIDs, handled: handled, bundleIdentifier: bundleIdentifier, at: date, db, taken: &taken)
        }
        pendingTally.record(taken)
        return unknown
    }

    /// ``acknowledge(deliveryIDs:handled:bundleIdentifier:at:)`` within a transaction, in one
    /// statement (and one more when some were not acknowledged now, to tell those settled before
    /// from those unknown); `taken` gets what each acknowledged row takes off its handler's
    /// pending tally.
    func acknowledge(_ deliveryIDs: [UUID], handled: Bool, bundleIdentifier: String, at date: Date, _ db: Database,
                     taken: inout [PendingTally.Change]) throws -> [UUID] {
        let newState = handled ? LedgerRecord.State.acknowledged : .declined
        // `+bundleIdentifier`: found by delivery id, not by walking the handler's history.
        let update = try db.cachedStatement(sql: """
            UPDATE delivery SET state = ?, acknowledgedAt = ?
            WHERE deliveryID IN (SELECT value FROM json_each(?)) AND +bundleIdentifier = ? AND state = 'committed'
            RETURNING deliveryID, \(Self.pendingColumns)
            """)
        let identifiers = Self.jsonArray(deliveryIDs)
        var settled: Set<String> = []
        let rows = try Row.fetchCursor(update, arguments: [newState.rawValue, date.ledgerValue, identifiers, bundleIdentifier])
        while let row = try rows.next() {
            settled.insert(row[0])
            taken.append(Self.pendingChange(row, from: 1, count: -1))
        }
        guard settled.count < deliveryIDs.count else { return [] }
        let before = try String.fetchSet(db, sql: """
            SELECT deliveryID FROM delivery
            WHERE deliveryID IN (SELECT value FROM json_each(?)) AND +bundleIdentifier = ? AND state IN ('acknowledged', 'declined')
            """, arguments: [identifiers, bundleIdentifier])
        return deliveryIDs.filter { !settled.contains($0.ledgerText) && !before.contains($0.ledgerText) }
    }

    /// Records a custom-scheme URL delivery, committed at once; `requesterUID` is the uid whose
    /// `open` asked for it, when its pending deliveries are limited.
    package func recordURL(
        bundleIdentifier: String,
        url: String,
        sourceApplication: String? = nil,
        annotation: String? = nil,
        deliveryID: UUID = .random(),
        requesterUID: UInt32? = nil,
        at date: Date = Date()
    ) throws -> LedgerRecord {
        var record = LedgerRecord(
            deliveryID: deliveryID, bundleIdentifier: bundleIdentifier, kind: .url, url: url,
            sourceApplication: sourceApplication, annotation: annotation, state: .committed,
            createdAt: date, committedAt: date, requesterUID: requesterUID)
        var owed: [PendingTally.Change] = []
        record.sequence = try write("record a URL delivery") { db in
            owed = []
            return try insertCommitted(record, db, owed: &owed)
        }
        pendingTally.record(owed)
        return record
    }

    /// Inserts a delivery that is committed at once (a URL): its id, the next, is its sequence.
    func insertCommitted(_ record: LedgerRecord, _ db: Database, owed: inout [PendingTally.Change]) throws -> Int64 {
        let id = try Self.insert([record], db)[0]
        committing { $0 = max($0, id) }
        owed.append(PendingTally.Change(bundleIdentifier: record.bundleIdentifier, userID: record.requesterUID, count: 1,
                                        bytes: (record.size ?? 0) + Int64(record.url?.utf8.count ?? 0)))
        return id
    }

    /// One delivery by its id, in any state.
    package func record(deliveryID: UUID) throws -> LedgerRecord? {
        try read("read a delivery") { db in
            try LedgerRecord.fetchOne(db, sql: "SELECT * FROM delivery WHERE deliveryID = ?", arguments: [deliveryID.ledgerText])
        }
    }

    /// The deliveries of these ids the ledger has, in any state, in one read with one cached
    /// statement: a fleet claim round asks for hundreds at once, and a read each (a statement
    /// prepared and authorized each time) cost more than the look-up.
    package func records(deliveryIDs: [UUID]) throws -> [LedgerRecord] {
        try read("read deliveries") { db in
            let statement = try db.cachedStatement(sql: "SELECT * FROM delivery WHERE deliveryID = ?")
            return try deliveryIDs.compactMap { id in try LedgerRecord.fetchOne(statement, arguments: [id.ledgerText]) }
        }
    }

    // MARK: Sources

    /// The committed (or later) deliveries of exactly these source files whose removal from their
    /// inboxes was never confirmed, by index into `sources`: a source whose copy was committed but
    /// whose removal a crash undid (or that could not be removed) must be removed, not delivered
    /// again. Device, inode, size, modification time and path must all match; a source confirmed
    /// removed does not count, so a file dropped again later (a reused inode, an archive extracted
    /// twice with the same times) is a new delivery.
    ///
    /// A source that `isTakenOut` (out of its inbox since it was opened: renamed aside by the
    /// batch before, or removed) also matches a delivery whose source was already taken out: the
    /// inode cannot have been reused while it is held open, so that delivery was of this very file,
    /// by a batch that committed after this one opened it.
    ///
    /// `isTakenOut` is asked only for sources whose inode a row records (next to none in a burst
    /// of new files), and asked again after a miss: the batch before takes its sources out on
    /// another thread, and notes that only after the move, so a source seen in its inbox before
    /// the read, and noted taken out by the time the read ran, is seen taken out afterwards.
    package func deliveredRecords(forSources sources: [(status: FileStatus, path: FilePath)],
                                  isTakenOut: (Int) -> Bool = { _ in false }) throws -> [Int: LedgerRecord] {
        guard !sources.isEmpty else { return [:] }
        return try read("look up sources") { db in
            let present = try db.cachedStatement(sql: """
                SELECT * FROM delivery
                WHERE sourceDevice = ? AND sourceInode = ? AND sourceSize = ? AND sourceMtimeNs = ?
                  AND sourcePath = ? AND state <> 'staged' AND sourceRemovedAt IS NULL
                ORDER BY id DESC LIMIT 1
                """)
            let removed = try db.cachedStatement(sql: """
                SELECT * FROM delivery
                WHERE sourceDevice = ? AND sourceInode = ? AND sourceSize = ? AND sourceMtimeNs = ?
                  AND sourcePath = ? AND state <> 'staged'
                ORDER BY id DESC LIMIT 1
                """)
            let recorded = try Self.recordedSourceInodes(of: sources.map(\.status), db)
            var found: [Int: LedgerRecord] = [:]
            for (index, (status, path)) in sources.enumerated()
            where recorded[status.device]?.contains(Int64(bitPattern: status.inode)) == true {
                let arguments: StatementArguments = [
                    Int64(bitPattern: status.device), Int64(bitPattern: status.inode), status.size,
                    status.modificationTimeNanoseconds, LedgerRecord.bytes(of: path),
                ]
                let takenOut = isTakenOut(index)
                if let record = try LedgerRecord.fetchOne(takenOut ? removed : present, arguments: arguments) {
                    found[index] = record
                } else if !takenOut, isTakenOut(index), let record = try LedgerRecord.fetchOne(removed, arguments: arguments) {
                    found[index] = record
                }
            }
            return found
        }
    }

    /// How many inodes one probe of ``recordedSourceInodes(of:_:)`` asks for.
    static let inodeProbeWidth = 64

    /// The inodes, by device, of `sources` that any row records as its source: one indexed read
    /// per ``inodeProbeWidth`` sources. A burst of new files finds next to none, and the read by
    /// every column above then runs only for those; run for each file, it took 12 µs of the
    /// commit thread's 107 per file.
    static func recordedSourceInodes(of sources: [FileStatus], _ db: Database) throws -> [UInt64: Set<Int64>] {
        let marks = Array(repeating: "?", count: inodeProbeWidth).joined(separator: ", ")
        let probe = try db.cachedStatement(sql: """
            SELECT sourceInode FROM delivery WHERE sourceDevice = ? AND sourceInode IN (\(marks))
            """)
        var recorded: [UInt64: Set<Int64>] = [:]
        for (device, statuses) in Dictionary(grouping: sources, by: \.device) {
            let inodes = statuses.map { Int64(bitPattern: $0.inode) }
            for start in stride(from: 0, to: inodes.count, by: inodeProbeWidth) {
                let chunk = inodes[start..<min(start + inodeProbeWidth, inodes.count)]
                // The last probe is filled up with its own first inode: one statement for all.
                var arguments: [DatabaseValueConvertible] = [Int64(bitPattern: device)]
                arguments += chunk.map { $0 as DatabaseValueConvertible }
                arguments += Array(repeating: chunk[chunk.startIndex], count: inodeProbeWidth - chunk.count) as [DatabaseValueConvertible]
                let found = try Int64.fetchSet(probe, arguments: StatementArguments(arguments))
                if !found.isEmpty { recorded[device, default: []].formUnion(found) }
            }
        }
        return recorded
    }

    /// Checkpoints the ledger into its main file (the `-wal` left empty) and closes it (also done
    /// when the ledger is released). GRDB closes the writer before the read-only readers, so
    /// SQLite's own checkpoint at the last close cannot run: it is done here first.
    package func close() throws {
        do {
            try pool.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
            try pool.close()
        } catch {
            throw Self.ledgerError("close the delivery ledger", error)
        }
    }

    /// The part paths of message `messageID` delivered into `mailbox` (committed or later): one
    /// indexed read per message, so a message re-read after a crash skips what is done.
    package func deliveredParts(messageID: String, mailbox: String) throws -> Set<String> {
        try read("look up a message's delivered attachments") { db in try deliveredParts(messageID: messageID, mailbox: mailbox, db) }
    }

    func deliveredParts(messageID: String, mailbox: String, _ db: Database) throws -> Set<String> {
        let paths = try String.fetchAll(db, sql: """
            SELECT partPath FROM delivery
            WHERE messageID = ? AND mailbox = ? AND partPath IS NOT NULL AND state <> 'staged'
            """, arguments: [messageID, mailbox])
        return Set(paths)
    }
}
