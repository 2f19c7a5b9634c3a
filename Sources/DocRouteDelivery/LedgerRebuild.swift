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

#if canImport(Glibc)
import Glibc
#endif

/// `docrouted --recover-ledger`: sets a damaged ledger aside and builds a new one from what the
/// sandboxes hold.
///
/// 1. `ledger.sqlite` (with its `-wal` and `-shm`) is renamed to `ledger.sqlite.damaged-<time>`
///    (kept for inspection, never removed).
/// 2. The rows still readable from it are read (read-only), up to the first damaged page.
/// 3. Every document in every container's `Documents/Inbox/<mailbox>/` (files, and package
///    folders) is measured: path, size, SHA-256. One the old ledger names with the same path,
///    size and digest keeps its row (identifier, state: an acknowledged document stays
///    acknowledged). Any other is owed to its handler again (`committed`): at least once, a
///    handler may hear of a document twice, never of none.
/// 4. Custom-scheme URL deliveries still readable keep their rows.
///
/// The daemon must be stopped meanwhile.
package enum LedgerRebuild {
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
    }

    /// Runs the rebuild for `configuration`'s state directory and containers.
    package static func run(configuration: DaemonConfiguration, logger: Logger, now: Date = Date()) throws -> Report {
        var report = Report()
        let state = FilePath(configuration.stateDirectory)
        let path = state.appending(DeliveryLedger.fileName)
        var salvaged: [LedgerRecord] = []
        if FileManager.default.fileExists(atPath: path.string) {
            // `20261124T093000Z`: the basic form of RFC 3339's UTC time, safe in a file name.
            let aside = path.string + ".damaged-" + UTCTimestamp(now).rfc3339.filter { $0 != "-" && $0 != ":" }
            for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path.string + suffix) {
                guard rename(path.string + suffix, aside + suffix) == 0 else {
                    throw DeliveryError(errno: Errno(rawValue: errno), operation: "set the damaged ledger aside as \(aside + suffix)", path: path.string + suffix)
                }
                report.damagedFiles.append(aside + suffix)
            }
            (salvaged, report.salvageComplete) = DeliveryLedger.salvage(FilePath(aside))
            report.salvagedRows = salvaged.count
        }
        try DeliveryLedger.makeDirectory(state, mode: LedgerBackend.stateDirectoryMode(configuration))
        let ledger = try DeliveryLedger(path: path, replacingMissing: true, logger: logger)
        var closed = false
        defer { if !closed { try? ledger.close() } }

        var byPath: [String: LedgerRecord] = [:]
        for record in salvaged where record.kind == .file && record.state != .staged {
            if let finalPath = record.finalPath { byPath[finalPath] = record }
        }
        var records: [LedgerRecord] = salvaged.filter { $0.kind == .url && $0.state != .staged }
        report.urls = records.count
        var kept: [LedgerRecord] = []
        var owed: [(LedgerRecord, Int64)] = []

        let registry = HandlerDirectory(path: configuration.handlersDirectory).load(logger: logger)
        let engine = TypeEngine(catalog: registry.catalog, mimeDatabase: MIMEDatabase.loadSystemOrBuiltin())
        var containers: [String: String] = [:]
        let names = (try? FileManager.default.contentsOfDirectory(atPath: configuration.containersDirectory)) ?? []
        for name in names.sorted() { containers[configuration.containersDirectory + "/" + name] = name }
        for handler in registry.handlers {
            containers[handler.manifest.container ?? configuration.containersDirectory + "/" + handler.bundleIdentifier] = handler.bundleIdentifier
        }
        for (root, bundle) in containers.sorted(by: { $0.key < $1.key }) {
            let inbox = root + "/Documents/Inbox"
            for mailbox in ((try? FileManager.default.contentsOfDirectory(atPath: inbox)) ?? []).sorted() {
                let folder = inbox + "/" + mailbox
                // Only real folders: a link in Inbox is not a mailbox docrouted made.
                guard let found = try? FilePath(folder).stat(followTargetSymlink: false), FileStatus(found).isDirectory else { continue }
                for name in ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted() {
                    guard !SandboxWriter.isTemporaryName(name), !DeliveryBatch.isPackageTemporary(name) else { continue }
                    let file = folder + "/" + name
                    let found: (status: FileStatus, sha256: String, head: [UInt8])
                    do {
                        guard let measured = try measure(file) else { continue }
                        found = measured
                    } catch {
                        report.unreadable.append("\(file): \(error)")
                        continue
                    }
                    report.documents += 1
                    if var record = byPath[file], record.size == found.status.size, record.sha256 == found.sha256 {
                        record.finalDevice = found.status.device
                        record.finalInode = found.status.inode
                        record.temporaryPath = nil
                        kept.append(record)
                        continue
                    }
                    let classification = engine.classify(filename: name, head: found.head)
                    let record = LedgerRecord(
                        bundleIdentifier: bundle, kind: .file, mailbox: mailbox, originalName: name,
                        extensionChain: classification.extensionChain, containerPath: root, finalPath: file,
                        finalDevice: found.status.device, finalInode: found.status.inode,
                        contentType: classification.contentType, size: found.status.size, sha256: found.sha256,
                        annotation: DeliveryBatch.annotation(mailbox: mailbox, originalFilename: name, size: found.status.size, extra: nil),
                        state: .committed, createdAt: now, committedAt: now)
                    owed.append((record, found.status.modificationTimeNanoseconds))
                }
            }
        }
        report.kept = kept.count
        report.owed = owed.count
        // Old order first (their sequences), then the documents found anew, oldest first.
        records += kept
        records.sort { $0.sequence < $1.sequence }
        records += owed.sorted { $0.1 < $1.1 }.map(\.0)
        try ledger.rebuild(records)
        try ledger.close()
        closed = true
        giveToStateDirectoryOwner(path)
        logger.notice("ledger rebuilt from the sandboxes", metadata: [
            "documents": "\(report.documents)", "kept": "\(report.kept)", "owed": "\(report.owed)",
            "urls": "\(report.urls)", "damaged": "\(report.damagedFiles)",
        ])
        return report
    }

    /// Run as root for a daemon that runs as its own user (the unit's `docroute`), the new ledger
    /// files would be root's and the service could not open them: they get the state
    /// directory's owner.
    static func giveToStateDirectoryOwner(_ path: FilePath) {
        var folder = stat()
        guard geteuid() == 0, stat(path.removingLastComponent().string, &folder) == 0, folder.st_uid != 0 else { return }
        for file in [path.string, path.string + "-wal", path.string + "-shm", DeliveryLedger.marker(path)] {
            _ = lchown(file, folder.st_uid, folder.st_gid)
        }
    }

    /// A regular file's or a package folder's status, SHA-256 and first bytes; nil for anything
    /// else (links, FIFOs: never delivered by docrouted).
    static func measure(_ path: String) throws -> (status: FileStatus, sha256: String, head: [UInt8])? {
        let file: FileDescriptor
        do throws(Errno) {
            file = try FileDescriptor.open(atPath: FilePath(path), flags: O_RDONLY | O_NONBLOCK)
        } catch .tooManySymbolicLinkLevels {
            return nil
        } catch {
            throw DeliveryError(errno: error, operation: "read", path: path)
        }
        let descriptor = file.rawValue
        defer { file.closeIgnoringErrors() }
        let status = try DeliveryError.performing("inspect", path) { try FileDescriptor(rawValue: descriptor).status() }
        if status.isDirectory {
            let (size, sha256) = try PackageTree.digest(of: descriptor, describing: path)
            var measured = status
            measured.size = size
            return (measured, sha256, [])
        }
        guard status.isRegularFile else { return nil }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 4096)
        defer { buffer.deallocate() }
        var hash = SHA256()
        var head: [UInt8] = []
        var offset: Int64 = 0
        while true {
            let count = try DeliveryError.performing("read", path) { try FileDescriptor(rawValue: descriptor).read(into: buffer, atOffset: offset) }
            if count == 0 { break }
            let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            if head.isEmpty { head = Array(bytes.prefix(4096)) }
            hash.update(bufferPointer: bytes)
            offset += Int64(count)
        }
        var measured = status
        measured.size = offset
        return (measured, SandboxWriter.hex(hash.finalize()), head)
    }
}
