import Logging

/// The fields of one journal entry, built from a swift-log event without touching journald.
///
/// ``JournalLogHandler`` sends ``assignments`` with `sd_journal_sendv`; building them is pure so the
/// exact fields can be checked.
package struct JournalEntry: Hashable, Sendable {
    /// One `NAME=value` pair.
    package struct Field: Hashable, Sendable, CustomStringConvertible {
        /// The field name.
        package let name: JournalField
        /// The value, any UTF-8 text including line breaks (`sd_journal_sendv` carries them).
        package let value: String

        /// `NAME=value`.
        package var description: String { "\(name.name)=\(value)" }
    }

    /// The fields in the order they are sent: MESSAGE, PRIORITY, SYSLOG_IDENTIFIER, the CODE_
    /// fields, MESSAGE_ID when there is one, the metadata sorted by key, then the logger's fields.
    ///
    /// Two metadata keys that sanitise to the same name both appear; the journal keeps every value.
    package let fields: [Field]

    /// The entry for one log event.
    ///
    /// - Parameters:
    ///   - metadata: the merged metadata (handler, provider and call site). The key
    ///     ``DocRouteMessageID/metadataKey`` becomes `MESSAGE_ID` when it names a
    ///     ``DocRouteMessageID``, and `DOCROUTE_MESSAGE_ID` otherwise.
    ///   - label: the logger's label, written as `DOCROUTE_LOGGER` when not empty.
    ///   - source: the swift-log source (module), written as `DOCROUTE_SOURCE` when not empty.
    ///   - error: an error attached to the event, written as `DOCROUTE_ERROR`.
    package init(
        level: Logger.Level,
        message: String,
        metadata: Logger.Metadata = [:],
        error: (any Error)? = nil,
        label: String = "",
        source: String = "",
        file: String,
        function: String,
        line: UInt,
        syslogIdentifier: String
    ) {
        var fields: [Field] = [
            Field(name: .message, value: message),
            Field(name: .priority, value: String(Self.priority(for: level))),
            Field(name: .syslogIdentifier, value: syslogIdentifier),
            Field(name: .codeFile, value: file),
            Field(name: .codeLine, value: String(line)),
            Field(name: .codeFunction, value: function),
        ]
        var remaining = metadata
        if let value = remaining[DocRouteMessageID.metadataKey],
            let messageID = DocRouteMessageID(metadataValue: value.description)
        {
            fields.append(Field(name: .messageID, value: messageID.id128))
            remaining[DocRouteMessageID.metadataKey] = nil
        }
        for (key, value) in remaining.sorted(by: { $0.key < $1.key }) {
            fields.append(Field(name: JournalField(metadataKey: key), value: value.description))
        }
        if !label.isEmpty { fields.append(Field(name: .docrouteLogger, value: label)) }
        if !source.isEmpty { fields.append(Field(name: .docrouteSource, value: source)) }
        if let error { fields.append(Field(name: .docrouteError, value: String(describing: error))) }
        self.fields = fields
    }

    /// The `NAME=value` strings handed to `sd_journal_sendv`, one per iovec.
    package var assignments: [String] { fields.map(\.description) }

    /// Every value of a field, in order (empty when the entry lacks it).
    package subscript(field: JournalField) -> [String] {
        fields.filter { $0.name == field }.map(\.value)
    }

    /// The syslog priority journald stores for a swift-log level.
    ///
    /// swift-log has seven levels and syslog eight; `trace` and `debug` both map to 7 (debug), and
    /// nothing maps to 0 (emerg) or 1 (alert), which are for the whole system being unusable.
    package static func priority(for level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }
}
