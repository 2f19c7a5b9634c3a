import DocRoutePlatform
import DocRouteProtocol
import Foundation
import GRDB
import Logging
import SystemPackage

extension DeliveryLedger {
    /// Creates the ledger file 0600 before SQLite does (SQLite would use 0644 less the umask, and
    /// gives its `-wal` and `-shm` files the main file's mode), and takes group and other bits
    /// from ledger files an older version left open.
    static func prepareFiles(_ path: FilePath) throws {
        let descriptor = try DeliveryError.performing("create the delivery ledger", path.string) {
            try FileDescriptor.open(atPath: path, .readWrite, options: [.create], permissions: 0o600)
        }
        defer { descriptor.closeIgnoringErrors() }
        // The write-ahead log and shared memory exist only while (or after) SQLite ran.
        for (file, name) in [(descriptor, path.string)] + [path.string + "-wal", path.string + "-shm"].compactMap({ name in
            (try? FileDescriptor.open(atPath: FilePath(name), .readOnly)).map { ($0, name) }
        }) {
            defer { if file != descriptor { file.closeIgnoringErrors() } }
            guard let status = try? file.status(), status.mode & 0o077 != 0 else { continue }
            try DeliveryError.performing("make the ledger private (mode 0600)", name) { try file.changeMode(CModeT(status.mode) & 0o700) }
        }
    }

    /// `.ledger.sqlite-created` beside the ledger: written once the ledger was first opened, so
    /// that a ledger removed later is not silently replaced by an empty one (a glob such as
    /// `ledger.sqlite*` leaves it).
    package static func marker(_ path: FilePath) -> String {
        path.removingLastComponent().appending("." + (path.lastComponent?.string ?? fileName) + "-created").string
    }

    static func markCreated(_ path: FilePath) {
        // Only evidence for a later start: a marker that cannot be written costs nothing now.
        guard let descriptor = try? FileDescriptor.open(atPath: FilePath(marker(path)), .writeOnly, options: [.create, .exclusiveCreate]) else { return }
        defer { descriptor.closeIgnoringErrors() }
        let text = Array("the delivery ledger \(path.string) was created \(UTCTimestamp(Date()).rfc3339); if it is missing, run docrouted --recover-ledger\n".utf8)
        _ = try? text.withUnsafeBytes { buffer in try descriptor.writeAll(from: buffer) }
        _ = try? descriptor.sync()
    }

    static func refuseIfRemoved(_ path: FilePath) throws {
        guard !FileManager.default.fileExists(atPath: path.string) else { return }
        let evidence = [marker(path), path.string + "-wal", path.string + "-shm"].filter { FileManager.default.fileExists(atPath: $0) }
        guard let first = evidence.first else { return }
        throw damaged(path, "it is missing, but \(first) shows it existed: an empty ledger now would forget every document its handlers are still owed")
    }

    /// Refuses a write-ahead log whose header is not SQLite's: SQLite would ignore it and every
    /// transaction in it (deliveries, acknowledgements) would vanish without a word. A log
    /// shorter than its header, or zeroed, never held a committed transaction.
    static func checkWriteAheadLog(_ path: FilePath) throws {
        let logPath = path.string + "-wal"
        guard let handle = FileHandle(forReadingAtPath: logPath) else { return }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: 32), data.count == 32 else { return }
        let header = [UInt8](data)
        if header.allSatisfy({ $0 == 0 }) { return }
        func bigEndian(_ offset: Int) -> UInt32 {
            header[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
        }
        let magic = bigEndian(0)
        guard magic == 0x377F_0682 || magic == 0x377F_0683, bigEndian(4) == 3_007_000 else {
            throw damaged(path, "its write-ahead log \(logPath) does not start with a SQLite WAL header")
        }
        // The header's checksum (sqlite3 walChecksumBytes): 32-bit words, big-endian when the
        // magic's low bit is set, little-endian otherwise.
        var first: UInt32 = 0
        var second: UInt32 = 0
        for offset in stride(from: 0, to: 24, by: 8) {
            let word0 = magic & 1 == 1 ? bigEndian(offset) : bigEndian(offset).byteSwapped
            let word1 = magic & 1 == 1 ? bigEndian(offset + 4) : bigEndian(offset + 4).byteSwapped
            first = first &+ word0 &+ second
            second = second &+ word1 &+ first
        }
        guard first == bigEndian(24), second == bigEndian(28) else {
            throw damaged(path, "the header checksum of its write-ahead log \(logPath) is wrong")
        }
    }

    /// The `ledger-damaged` error, with the steps to recover.
    static func damaged(_ path: FilePath, _ detail: String) -> DeliveryError {
        DeliveryError(
            code: .ledgerDamaged,
            message: "The delivery ledger \(path.string) is damaged (\(detail)). docrouted does not run on it: deliveries recorded there could not be read back, and handlers would not hear of them. \(DeliveryError.advice(for: .ledgerDamaged))")
    }

    /// Whether a SQLite error says the file is damaged, not a database, or was moved or removed
    /// under the open connection.
    static func isDamage(_ error: any Error) -> Bool {
        guard let error = error as? DatabaseError else { return false }
        switch error.resultCode {
        case .SQLITE_CORRUPT, .SQLITE_NOTADB: return true
        default: return error.extendedResultCode == .SQLITE_READONLY_DBMOVED
        }
    }

    static func fileStatus(_ path: String) -> FileStatus? {
        (try? FilePath(path).stat(followTargetSymlink: false)).map(FileStatus.init)
    }

    /// Checks that the ledger and its write-ahead log are still the files opened: SQLite goes on
    /// writing to a file removed or replaced under it, and those commits are lost at the next
    /// start. Sources are removed from their inboxes only after this check.
    /// - Throws: ``DeliveryError`` `ledger-damaged` (also reported to ``onDamage(_:)``).
    package func confirmInPlace() throws {
        let (ledger, log) = identity.withLock { $0 }
        func same(_ expected: FileStatus?, _ path: String) -> Bool {
            guard let expected else { return true }
            guard let found = Self.fileStatus(path) else { return false }
            return found.device == expected.device && found.inode == expected.inode
        }
        guard same(ledger, path.string), same(log, path.string + "-wal") else {
            throw reported(DeliveryError(
                code: .ledgerDamaged,
                message: "The delivery ledger \(path.string) (or its -wal file) was removed or replaced while docrouted used it; what it recorded since is lost with it. \(DeliveryError.advice(for: .ledgerDamaged))"))
        }
    }
}

extension DeliveryLedger {
    package func checkIntegrity() async throws -> [String] {
        let problems = try await readAsync("check the ledger") { db in try String.fetchAll(db, sql: "PRAGMA quick_check") }
        return problems == ["ok"] ? [] : problems
    }

    package func watch(logger: Logger, problem: @escaping @Sendable (DeliveryError) -> Void) throws -> any LedgerWatching {
        try LedgerWatch(ledger: self, logger: logger, problem: problem)
    }
}
