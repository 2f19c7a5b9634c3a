import CDocRouteSystemd
import DocRoutePlatform
import Logging

/// A swift-log handler that writes structured entries to the systemd journal with `sd_journal_sendv`.
///
/// Each metadata key becomes its own journal field (see ``JournalField/init(metadataKey:)``), so an
/// admin can ask `journalctl -u docroute DOCROUTE_BUNDLE_ID=com.sunsetlakesoftware.molecules`.
package struct JournalLogHandler: LogHandler {
    /// The logger's label, written as `DOCROUTE_LOGGER`.
    package let label: String
    /// The `SYSLOG_IDENTIFIER` of every entry, what `journalctl -t` selects.
    package var syslogIdentifier: String
    /// The lowest level this handler is asked to write.
    package var logLevel: Logger.Level
    /// Metadata added to every entry.
    package var metadata: Logger.Metadata = [:]
    /// Contextual metadata (task locals and the like) read at each log call.
    package var metadataProvider: Logger.MetadataProvider?

    /// The default `SYSLOG_IDENTIFIER`.
    package static let defaultSyslogIdentifier = "docrouted"

    /// A handler for one logger.
    package init(
        label: String,
        syslogIdentifier: String = JournalLogHandler.defaultSyslogIdentifier,
        logLevel: Logger.Level = .info,
        metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider
    ) {
        self.label = label
        self.syslogIdentifier = syslogIdentifier
        self.logLevel = logLevel
        self.metadataProvider = metadataProvider
    }

    /// Reads or writes one metadata value.
    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// The entry this handler would write for an event: handler metadata, then the provider's, then
    /// the call site's, later ones winning.
    package func entry(for event: LogEvent) -> JournalEntry {
        JournalEntry(
            level: event.level,
            message: event.message.description,
            metadata: mergedMetadata(event.metadata),
            error: event.error,
            label: label,
            source: event.source,
            file: event.file,
            function: event.function,
            line: event.line,
            syslogIdentifier: syslogIdentifier
        )
    }

    /// Writes the event to the journal.
    package func log(event: LogEvent) {
        let entry = entry(for: event)
        let result = Self.send(entry)
        if result < 0 {
            // A log call cannot throw, and losing the line silently would hide the very problem
            // being logged; stderr still reaches the journal's stream or the terminal.
            let line = "<\(JournalEntry.priority(for: event.level))>\(syslogIdentifier): \(event.message)\n"
            try? StandardStream.error.write(Array(line.utf8))
        }
    }

    /// Sends an entry with `sd_journal_sendv`, one iovec per field.
    /// - Returns: 0 on success or `-errno` as libsystemd reports it.
    @discardableResult
    package static func send(_ entry: JournalEntry) -> CInt {
        let assignments = entry.assignments.map { Array($0.utf8) }
        let total = assignments.reduce(0) { $0 + $1.count }
        // One buffer for all fields keeps every iovec's pointer valid for the whole call.
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(total, 1), alignment: 1)
        defer { storage.deallocate() }
        var vectors: [iovec] = []
        vectors.reserveCapacity(assignments.count)
        var offset = 0
        for bytes in assignments {
            let slice = UnsafeMutableRawBufferPointer(rebasing: storage[offset..<(offset + bytes.count)])
            slice.copyBytes(from: bytes)
            vectors.append(iovec(iov_base: slice.baseAddress, iov_len: bytes.count))
            offset += bytes.count
        }
        return vectors.withUnsafeBufferPointer { sd_journal_sendv($0.baseAddress, CInt($0.count)) }
    }
}
