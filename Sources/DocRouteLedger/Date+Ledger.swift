import DocRouteProtocol
import Foundation
import GRDB

extension Date {
    /// The date as the ledger stores it: GRDB's text format (`2026-11-24 09:30:00.125`, UTC),
    /// written by ``UTCTimestamp`` instead of GRDB's `DateFormatter`, which would bring ICU into
    /// the daemon (see ``UTCTimestamp``).
    var ledgerValue: DatabaseValue { UTCTimestamp(self).ledgerText.databaseValue }

    /// A date the ledger stored: its own text, else anything GRDB reads as a date (a number of
    /// seconds, another SQLite date form); nil for NULL or anything else.
    static func fromLedger(_ value: DatabaseValue) -> Date? {
        if case .string(let text) = value.storage, let timestamp = UTCTimestamp(ledgerText: text) { return timestamp.date }
        return Date.fromDatabaseValue(value)
    }
}
