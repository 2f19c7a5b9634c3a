import GRDB

/// A place in the order of acknowledgement (the time as stored, then the row), so a sweep
/// pages past copies it could not settle instead of reading them again. Opaque: each ledger keeps
/// in it what its own order needs.
package struct RetentionPosition: Sendable, Hashable {
    var acknowledgedAt: DatabaseValue
    var row: Int64
}
