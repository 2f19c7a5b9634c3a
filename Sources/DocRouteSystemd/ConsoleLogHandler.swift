import DocRoutePlatform
import Foundation
import Logging

/// Text log lines on standard error with the message first and the metadata after it:
/// `2026-11-24T00:18:51+0000 warning docrouted: quarantined: no handler claims … mailbox=Inbox path=/…`.
///
/// swift-log's `StreamLogHandler` puts the metadata first, so with long key lists the message
/// (what a reader looks for) ends up far to the right.
package struct ConsoleLogHandler: LogHandler {
    package let label: String
    package var logLevel: Logger.Level
    package var metadata: Logger.Metadata = [:]
    package var metadataProvider: Logger.MetadataProvider?

    package init(label: String, logLevel: Logger.Level = .info, metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider) {
        self.label = label
        self.logLevel = logLevel
        self.metadataProvider = metadataProvider
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// The line for an event, without its newline: handler metadata, then the provider's, then
    /// the call site's, later ones winning, sorted by key.
    package func line(for event: LogEvent, at date: Date = Date()) -> String {
        var line = "\(Self.timestamp(date)) \(event.level) \(label): \(event.message)"
        for (key, value) in mergedMetadata(event.metadata).sorted(by: { $0.key < $1.key }) { line += " \(key)=\(value)" }
        if !event.source.isEmpty { line += " [\(event.source)]" }
        return line
    }

    package func log(event: LogEvent) {
        // One write per line, so lines from several threads never interleave; a line that cannot
        // be written has nowhere else to go.
        try? StandardStream.error.write(Array((line(for: event) + "\n").utf8))
    }

    /// `2026-11-24T00:18:51+0000`, local time, as StreamLogHandler writes it.
    static func timestamp(_ date: Date) -> String {
        LocalTime.timestamp(date)
    }
}
