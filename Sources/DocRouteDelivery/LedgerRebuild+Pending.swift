import DocRouteHandlers
import DocRouteLedger
import DocRoutePlatform
import DocRouteTypes
import Foundation
import Logging
import SystemPackage

extension LedgerRebuild {
    /// The documents a rebuild left unmeasured when its time was spent, kept in the state
    /// directory for the daemon to measure after it starts (``LedgerBackend/continueRebuild(committed:)``).
    package struct Pending: Codable, Sendable {
        /// `ledger-rebuild-pending.json` in the state directory.
        package static let fileName = "ledger-rebuild-pending.json"

        /// One document: its container, its handler, its mailbox and name.
        package struct Document: Codable, Sendable, Hashable {
            package var container: String
            package var bundle: String
            package var mailbox: String
            package var name: String

            /// Its path, as the ledger records it.
            package var path: String { container + "/Documents/Inbox/" + mailbox + "/" + name }
        }

        /// The damaged ledger set aside, whose rows decide which documents keep their state.
        package var damagedLedger: String?
        /// The time one document may take (``Limits/perFile``), in seconds.
        package var perFileSeconds: Double
        package var documents: [Document] = []

        /// Writes the list (or removes an old one when there is nothing left), durably.
        func save(in state: FilePath) throws {
            let path = state.appending(Self.fileName)
            guard !documents.isEmpty else {
                try DeliveryError.performing("remove", path.string) { try path.unlink() }
                return
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            try AtomicFile.replace(path, with: Array(try encoder.encode(self)), mode: 0o600)
        }

        /// The list a rebuild left, if any; a list that cannot be read is logged and left alone.
        static func read(in state: FilePath, logger: Logger) -> Pending? {
            let path = state.appending(fileName).string
            guard let data = FileManager.default.contents(atPath: path) else { return nil }
            do {
                return try JSONDecoder().decode(Pending.self, from: data)
            } catch {
                logger.error("the list of documents the ledger rebuild left cannot be read; run docrouted --recover-ledger again", metadata: [
                    "path": "\(path)", "error": "\(error)",
                ])
                return nil
            }
        }
    }

    /// What the daemon did with one document of the list.
    enum Settled: Sendable {
        /// Its old row was kept.
        case kept
        /// It is owed to this handler.
        case owed(bundle: String)
        /// It is gone, not a document, or has a row already.
        case passed
    }

    /// What the daemon needs to settle the list's documents: the damaged ledger's rows by path
    /// and the type engine. Read once, on a thread that may block.
    struct Continuation: Sendable {
        var byPath: [String: LedgerRecord]
        var engine: TypeEngine
        var perFile: Duration
    }

    static func continuation(_ pending: Pending, handlersDirectory: String, logger: Logger) -> Continuation {
        let salvaged = pending.damagedLedger.map { DeliveryLedger.salvage(FilePath($0)).records } ?? []
        let registry = HandlerDirectory(path: handlersDirectory).load(logger: logger)
        return Continuation(byPath: byPath(salvaged), engine: TypeEngine(catalog: registry.catalog, mimeDatabase: MIMEDatabase.loadSystemOrBuiltin()),
                            perFile: .milliseconds(Int64(max(0, pending.perFileSeconds) * 1000)))
    }

    /// Measures one listed document (within its time, else undigested) and gives it its row,
    /// unless a row for its path exists already.
    static func settle(_ document: Pending.Document, _ continuation: Continuation, ledger: any RecoveryLedger, logger: Logger) throws -> Settled {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 4096)
        defer { buffer.deallocate() }
        let measured: Measured?
        do {
            measured = try measure(document, deadline: .now + continuation.perFile, buffer: buffer)
        } catch let overTime as DocumentDigest.OverTime {
            logger.warning("document not digested within the time one may take; it is owed to its handler again, undigested", metadata: [
                "path": "\(document.path)", "seconds": "\(seconds(continuation.perFile))", "reason": "\(overTime)",
            ])
            measured = try measure(document, deadline: nil, buffer: buffer, digesting: false)
        }
        guard let measured else { return .passed }
        switch record(for: document, measured, byPath: continuation.byPath, engine: continuation.engine, now: Date()) {
        case .kept(let record):
            return try ledger.addRebuilt(record) ? .kept : .passed
        case .owed(let record):
            return try ledger.addRebuilt(record) ? .owed(bundle: document.bundle) : .passed
        }
    }
}
