import DocRoutePlatform
import Foundation
import GRDB
import SystemPackage

/// How a record is read from and written to the SQLite ledger's `delivery` table.
extension LedgerRecord: FetchableRecord {
    /// Reads a row of the `delivery` table.
    package init(row: Row) throws {
        let identifier: String = row["deliveryID"]
        guard let deliveryID = UUID(canonicalText: identifier) else {
            throw DeliveryError(code: .ledger, message: "The ledger holds a delivery id that is not a UUID: \(identifier.debugDescription).")
        }
        let kindText: String = row["kind"]
        let stateText: String = row["state"]
        guard let kind = Kind(rawValue: kindText), let state = State(rawValue: stateText) else {
            throw DeliveryError(code: .ledger, message: "The ledger row of \(identifier) has kind \(kindText.debugDescription) and state \(stateText.debugDescription), which this docrouted does not know.")
        }
        let sourcePathBytes: Data? = row["sourcePath"]
        self.init(
            deliveryID: deliveryID,
            // The row id is the commit order; a staged row has none yet.
            sequence: state == .staged ? 0 : row["id"],
            bundleIdentifier: row["bundleIdentifier"],
            kind: kind,
            url: row["url"],
            mailbox: row["mailbox"],
            originalName: row["originalName"],
            extensionChain: row["extensionChain"],
            containerPath: row["containerPath"],
            finalPath: row["finalPath"],
            finalDevice: Self.fileNumber(row, "finalDevice"),
            finalInode: Self.fileNumber(row, "finalInode"),
            temporaryPath: row["temporaryPath"],
            contentType: row["contentType"],
            size: row["size"],
            sha256: row["sha256"],
            sourceApplication: row["sourceApplication"],
            annotation: row["annotation"],
            state: state,
            sourcePath: sourcePathBytes.map(Self.filePath(bytes:)),
            sourceDevice: Self.fileNumber(row, "sourceDevice"),
            sourceInode: Self.fileNumber(row, "sourceInode"),
            sourceSize: row["sourceSize"],
            sourceMtimeNs: row["sourceMtimeNs"],
            messageID: row["messageID"],
            partPath: row["partPath"],
            createdAt: Date.fromLedger(row["createdAt"]) ?? Date(timeIntervalSince1970: 0),
            committedAt: Date.fromLedger(row["committedAt"]),
            acknowledgedAt: Date.fromLedger(row["acknowledgedAt"]),
            sourceRemovedAt: Date.fromLedger(row["sourceRemovedAt"]),
            // Absent from a ledger salvaged from before the column: nil.
            requesterUID: (row["requesterUID"] as Int64?).map { UInt32(truncatingIfNeeded: $0) },
            // Absent from a ledger from before the history: nil.
            seenAt: Date.fromLedger((row["seenAt"] as DatabaseValue?) ?? .null),
            inbox: row["inbox"],
            mimeType: row["mimeType"],
            typedBy: row["typedBy"],
            routedBy: row["routedBy"],
            notifiedAt: Date.fromLedger((row["notifiedAt"] as DatabaseValue?) ?? .null),
            notifiedBy: row["notifiedBy"],
            notifiedTo: row["notifiedTo"]
        )
    }

    /// Paths are stored as their raw bytes: a file name on Linux need not be UTF-8, and the
    /// recovery must find the very same name again.
    static func bytes(of path: FilePath) -> Data {
        path.withPlatformBytes { Data($0) }
    }

    /// A device or inode number read from its column. SQLite's integers are signed, so the
    /// number is stored as the same 64 bits taken as an `Int64` (``storedFileNumber(_:)``): one
    /// above `Int64.max` comes back whole. Nil for NULL.
    static func fileNumber(_ row: Row, _ column: String) -> UInt64? {
        (row[column] as Int64?).map { UInt64(bitPattern: $0) }
    }

    /// The column value of a device or inode number (``fileNumber(_:_:)``).
    static func storedFileNumber(_ number: UInt64?) -> Int64? {
        number.map { Int64(bitPattern: $0) }
    }

    static func filePath(bytes: Data) -> FilePath {
        var characters = bytes.map { CChar(bitPattern: $0) }
        characters.append(0)
        return FilePath(platformString: characters)
    }

    /// Appends the values of the columns, in ``insertColumns`` order. `dates` keeps the last
    /// formatted date: formatting one takes microseconds and a batch's rows share their dates.
    func appendInsertValues(to values: inout [(any DatabaseValueConvertible)?], dates: inout DateValues) {
        values.append(deliveryID.ledgerText)
        values.append(bundleIdentifier)
        values.append(kind.rawValue)
        values.append(url)
        values.append(mailbox)
        values.append(originalName)
        values.append(extensionChain)
        values.append(containerPath)
        values.append(finalPath)
        values.append(Self.storedFileNumber(finalDevice))
        values.append(Self.storedFileNumber(finalInode))
        values.append(temporaryPath)
        values.append(contentType)
        values.append(size)
        values.append(sha256)
        values.append(sourceApplication)
        values.append(annotation)
        values.append(state.rawValue)
        values.append(sourcePath.map(Self.bytes(of:)))
        values.append(Self.storedFileNumber(sourceDevice))
        values.append(Self.storedFileNumber(sourceInode))
        values.append(sourceSize)
        values.append(sourceMtimeNs)
        values.append(messageID)
        values.append(partPath)
        values.append(dates.value(createdAt))
        values.append(committedAt.map { dates.value($0) })
        values.append(acknowledgedAt.map { dates.value($0) })
        values.append(sourceRemovedAt.map { dates.value($0) })
        values.append(requesterUID.map { Int64($0) })
        values.append(seenAt.map { dates.value($0) })
        values.append(inbox)
        values.append(mimeType)
        values.append(typedBy)
        values.append(routedBy)
    }

    /// How many columns an insert writes.
    static let insertColumnCount = 35

    /// The database value of the dates last seen.
    struct DateValues {
        private var last: (Date, DatabaseValue)?

        mutating func value(_ date: Date) -> DatabaseValue {
            if let last, last.0 == date { return last.1 }
            let value = date.ledgerValue
            last = (date, value)
            return value
        }
    }

    static let insertColumns = """
        deliveryID, bundleIdentifier, kind, url, mailbox, originalName, extensionChain, containerPath, \
        finalPath, finalDevice, finalInode, temporaryPath, contentType, size, sha256, \
        sourceApplication, annotation, state, sourcePath, sourceDevice, sourceInode, sourceSize, \
        sourceMtimeNs, messageID, partPath, createdAt, committedAt, acknowledgedAt, sourceRemovedAt, requesterUID, \
        seenAt, inbox, mimeType, typedBy, routedBy
        """
}
