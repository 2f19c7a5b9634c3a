import Synchronization

/// What handlers are owed and have not acknowledged (committed deliveries), counted by handler and
/// by the uid whose `open` asked for them, with the places taken by deliveries still on their way:
/// the ledger's own count, kept in memory so that a limit is checked without a query per file.
///
/// The ledger loads it when it opens and changes it after each transaction that commits or
/// acknowledges deliveries (``DeliveryLedger``); the delivery side ``reserve(bundleIdentifier:userID:bytes:limits:)``s
/// a place before it copies anything and releases it once the delivery is committed or failed.
/// A place held while its delivery commits is counted twice for that moment: a limit errs on
/// the side of refusing.
package final class PendingTally: Sendable {
    /// Deliveries and their bytes (file sizes, URL lengths).
    package struct Amount: Sendable, Hashable, CustomStringConvertible {
        package var count: Int
        package var bytes: Int64

        package init(count: Int = 0, bytes: Int64 = 0) {
            self.count = count
            self.bytes = bytes
        }

        package var description: String { "\(count) deliveries, \(bytes) bytes" }
    }

    /// The most that may be owed: to one handler, and for one uid's requests.
    package struct Limits: Sendable, Hashable {
        package var perHandler: Amount
        package var perUser: Amount

        package init(perHandler: Amount, perUser: Amount) {
            self.perHandler = perHandler
            self.perUser = perUser
        }

        /// No limit at all (tests, tools).
        package static let unlimited = Limits(perHandler: Amount(count: .max, bytes: .max), perUser: Amount(count: .max, bytes: .max))
    }

    /// A place taken for one delivery on its way; give it back with ``release(_:)``.
    package struct Reservation: Sendable, Hashable {
        package var bundleIdentifier: String
        /// The uid counted, nil when none is (an inbox's file, or a uid not limited).
        package var userID: UInt32?
        package var bytes: Int64
    }

    /// Why a place was not given.
    package enum Refusal: Error, Sendable, Hashable, CustomStringConvertible {
        /// The handler is owed `owed` already, at `limit`.
        case handler(String, owed: Amount, limit: Amount)
        /// The uid's requests are owed `owed` already, at `limit`.
        case user(UInt32, owed: Amount, limit: Amount)

        package var description: String {
            switch self {
            case .handler(let bundle, let owed, let limit):
                "\(bundle) has \(owed.count) deliveries (\(owed.bytes) bytes) waiting that it has not acknowledged; docrouted keeps at most "
                    + "\(limit.count) (max_pending_per_handler) and \(limit.bytes) bytes (max_pending_bytes_per_handler) for one handler"
            case .user(let uid, let owed, let limit):
                "uid \(uid) has opened \(owed.count) documents (\(owed.bytes) bytes) that their handlers have not acknowledged yet; "
                    + "docrouted keeps at most \(limit.count) (max_pending_per_uid) and \(limit.bytes) bytes (max_pending_bytes_per_uid) for one user"
            }
        }
    }

    struct State {
        var handlers: [String: Amount] = [:]
        var users: [UInt32: Amount] = [:]
    }

    private let state = Mutex(State())

    package init() {}

    /// What `bundleIdentifier` is owed now, places taken included.
    package func owed(toHandler bundleIdentifier: String) -> Amount {
        state.withLock { $0.handlers[bundleIdentifier] ?? Amount() }
    }

    /// What `userID`'s requests are owed now, places taken included.
    package func owed(forUser userID: UInt32) -> Amount {
        state.withLock { $0.users[userID] ?? Amount() }
    }

    /// Takes a place for a delivery of `bytes` to `bundleIdentifier`, asked for by `userID` (nil:
    /// no uid is counted), unless that would pass `limits`. A delivery is refused when the count
    /// is at its limit, or when its bytes would pass the byte limit while anything is owed: a
    /// single document larger than the byte limit still goes once nothing else waits.
    package func reserve(bundleIdentifier: String, userID: UInt32?, bytes: Int64, limits: Limits) -> Result<Reservation, Refusal> {
        state.withLock { state in
            let handler = state.handlers[bundleIdentifier] ?? Amount()
            if Self.wouldPass(handler, adding: bytes, limit: limits.perHandler) {
                return .failure(.handler(bundleIdentifier, owed: handler, limit: limits.perHandler))
            }
            if let userID {
                let user = state.users[userID] ?? Amount()
                if Self.wouldPass(user, adding: bytes, limit: limits.perUser) {
                    return .failure(.user(userID, owed: user, limit: limits.perUser))
                }
            }
            Self.add(&state, bundleIdentifier, userID, count: 1, bytes: bytes)
            return .success(Reservation(bundleIdentifier: bundleIdentifier, userID: userID, bytes: bytes))
        }
    }

    /// Gives a place back: its delivery was committed (and counted by the ledger) or failed.
    package func release(_ reservation: Reservation) {
        state.withLock { Self.add(&$0, reservation.bundleIdentifier, reservation.userID, count: -1, bytes: -reservation.bytes) }
    }

    /// Committed deliveries (`count` > 0) or acknowledged ones (`count` < 0), as the ledger wrote them.
    func record(_ changes: [Change]) {
        guard !changes.isEmpty else { return }
        state.withLock { state in
            for change in changes {
                Self.add(&state, change.bundleIdentifier, change.userID, count: change.count, bytes: change.bytes)
            }
        }
    }

    /// Replaces everything with what the ledger holds (when it is opened or rebuilt, before any
    /// place is taken).
    func reset(handlers: [String: Amount], users: [UInt32: Amount]) {
        state.withLock { $0 = State(handlers: handlers, users: users) }
    }

    /// One row's change of state, for ``record(_:)``.
    struct Change: Sendable {
        var bundleIdentifier: String
        var userID: UInt32?
        var count: Int
        var bytes: Int64
    }

    private static func wouldPass(_ owed: Amount, adding bytes: Int64, limit: Amount) -> Bool {
        if owed.count >= limit.count { return true }
        let (total, overflow) = owed.bytes.addingReportingOverflow(bytes)
        return owed.count > 0 && (overflow || total > limit.bytes)
    }

    private static func add(_ state: inout State, _ bundleIdentifier: String, _ userID: UInt32?, count: Int, bytes: Int64) {
        var handler = state.handlers[bundleIdentifier] ?? Amount()
        handler.count += count
        handler.bytes += bytes
        state.handlers[bundleIdentifier] = handler.count <= 0 ? nil : handler
        guard let userID else { return }
        var user = state.users[userID] ?? Amount()
        user.count += count
        user.bytes += bytes
        state.users[userID] = user.count <= 0 ? nil : user
    }
}
