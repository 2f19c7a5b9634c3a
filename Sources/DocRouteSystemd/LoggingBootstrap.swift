import DocRoutePlatform
import Logging
import SystemPackage

/// Picks where the daemon's logs go: the journal, structured, when systemd connected stderr to it,
/// otherwise ``ConsoleLogHandler`` on stderr (the message first, then the metadata).
///
/// ```swift
/// LoggingBootstrap.choose(forceJournal: options.journal).bootstrap()
/// ```
package struct LoggingBootstrap: Sendable {
    /// Where log entries go.
    package enum Destination: Hashable, Sendable, CustomStringConvertible {
        /// Structured entries through ``JournalLogHandler``.
        case journal
        /// Text lines through ``ConsoleLogHandler`` on standard error.
        case standardError

        /// `journal` or `stderr`.
        package var description: String {
            switch self {
            case .journal: "journal"
            case .standardError: "stderr"
            }
        }
    }

    /// The device and inode of an open file, as `JOURNAL_STREAM` names them.
    package struct StreamIdentity: Hashable, Sendable, CustomStringConvertible {
        /// `st_dev`.
        package let device: UInt64
        /// `st_ino`.
        package let inode: UInt64

        /// An identity.
        package init(device: UInt64, inode: UInt64) {
            self.device = device
            self.inode = inode
        }

        /// Parses `JOURNAL_STREAM`'s `DEVICE:INODE` (both decimal); `nil` when malformed.
        package init?(journalStream: String) {
            let parts = journalStream.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else {
                return nil
            }
            self.init(device: device, inode: inode)
        }

        /// The identity of an open descriptor, or `nil` when `fstat` fails (e.g. it is closed).
        package init?(fileDescriptor: CInt) {
            guard let status = try? FileDescriptor(rawValue: fileDescriptor).status() else { return nil }
            self.init(device: status.device, inode: status.inode)
        }

        /// `DEVICE:INODE`.
        package var description: String { "\(device):\(inode)" }
    }

    /// Where this bootstrap sends logs.
    package let destination: Destination
    /// The `SYSLOG_IDENTIFIER` journal entries carry.
    package let syslogIdentifier: String
    /// The level every new logger starts at.
    package let logLevel: Logger.Level

    /// A bootstrap with an explicit destination.
    package init(
        destination: Destination,
        syslogIdentifier: String = JournalLogHandler.defaultSyslogIdentifier,
        logLevel: Logger.Level = .info
    ) {
        self.destination = destination
        self.syslogIdentifier = syslogIdentifier
        self.logLevel = logLevel
    }

    /// Looks at this process's `JOURNAL_STREAM` and stderr and picks the destination.
    ///
    /// - Parameter forceJournal: write to the journal even when stderr is not connected to it
    ///   (e.g. `docrouted --log-journal` started from a shell).
    package static func choose(
        forceJournal: Bool = false,
        syslogIdentifier: String = JournalLogHandler.defaultSyslogIdentifier,
        logLevel: Logger.Level = .info
    ) -> LoggingBootstrap {
        let journalStream = ProcessEnvironment.value("JOURNAL_STREAM")
        let destination = Self.destination(
            journalStream: journalStream,
            standardError: StreamIdentity(fileDescriptor: StandardStream.error.descriptor.rawValue),
            forceJournal: forceJournal
        )
        return LoggingBootstrap(destination: destination, syslogIdentifier: syslogIdentifier, logLevel: logLevel)
    }

    /// The decision, without looking at the process.
    ///
    /// systemd sets `JOURNAL_STREAM` for a service whose stderr goes to the journal; a process that
    /// inherited the variable but had stderr redirected (a child run with `2>file`) must not take it
    /// for granted, so the device and inode must match stderr's, as systemd.exec(5) advises.
    package static func destination(
        journalStream: String?,
        standardError: StreamIdentity?,
        forceJournal: Bool
    ) -> Destination {
        if forceJournal { return .journal }
        guard let journalStream, let expected = StreamIdentity(journalStream: journalStream),
            let standardError, standardError == expected
        else { return .standardError }
        return .journal
    }

    /// A handler for a logger with this label, at ``logLevel``.
    package func makeLogHandler(
        label: String,
        metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider
    ) -> any LogHandler {
        switch destination {
        case .journal:
            return JournalLogHandler(
                label: label, syslogIdentifier: syslogIdentifier, logLevel: logLevel,
                metadataProvider: metadataProvider)
        case .standardError:
            // The message before the metadata, so it can be read.
            return ConsoleLogHandler(label: label, logLevel: logLevel, metadataProvider: metadataProvider)
        }
    }

    /// Installs this choice as the process's logging backend (`LoggingSystem.bootstrap`; once per
    /// process).
    package func bootstrap(metadataProvider: Logger.MetadataProvider? = nil) {
        let chosen = self
        LoggingSystem.bootstrap(
            { label, provider in chosen.makeLogHandler(label: label, metadataProvider: provider) },
            metadataProvider: metadataProvider
        )
    }
}
