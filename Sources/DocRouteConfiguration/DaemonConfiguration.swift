import DocRouteProtocol
import Foundation
import TOMLKit

/// docrouted's configuration (`docroute.toml`).
package struct DaemonConfiguration: Sendable, Hashable {
    /// The most files intake hands to delivery in one batch (one group commit); `max_queued_files`
    /// may not be smaller, or a full queue could never make a whole batch.
    package static let intakeBatchLimit = 256

    package var socket: String
    package var stateDirectory: String
    package var containersDirectory: String
    package var handlersDirectory: String
    package var quarantineDirectory: String
    package var maxFileSize: Int64
    package var maxUnacknowledged: Int
    package var maxConnections: Int
    package var adminGroup: String?
    package var inboxes: [InboxConfiguration]
    /// A node-exporter textfile-collector file (`….prom`) that docrouted keeps its metrics in;
    /// nil writes none.
    package var metricsTextfile: String? = nil
    /// Arrivals the intake keeps in memory (`max_queued_files`); more wait in their inbox and are
    /// found by listing it again once these are delivered. 4,096 is sixteen batches: a burst of
    /// 100,000 went as fast as with 16,384 and peaked 6 MiB lower (docs/BENCHMARKS.md).
    package var maxQueuedFiles: Int = 4_096
    /// Connections one uid may hold (`max_connections_per_uid`); root is not counted against it.
    package var maxConnectionsPerUID: Int = 32
    /// Of `max_connections`, how many only root and handlers' users may take
    /// (`reserved_handler_connections`), so a flood by anyone else leaves room to subscribe.
    /// nil: an eighth of `max_connections`.
    package var reservedHandlerConnections: Int? = nil
    /// Seconds a connection may stay idle before it subscribes (`idle_timeout`); then it is closed.
    package var idleTimeoutSeconds: Int = 60
    /// Bytes of unfinished lines all connections together may make docrouted hold
    /// (`max_unfinished_line_bytes`); a connection whose half line passes it is closed.
    package var maxUnfinishedLineBytes: Int = 16 << 20
    /// Folder levels a package document may have below its top (`max_package_depth`); a deeper
    /// one is quarantined.
    package var maxPackageDepth: Int = 256
    /// Files and folders a package document may hold (`max_package_entries`); a larger one is
    /// quarantined.
    package var maxPackageEntries: Int = 100_000
    /// Folders watched in one inbox (`max_mailboxes`): its mailboxes, the folders inside them and a
    /// Maildir's folders. Anyone who can write an inbox can make folders; past the limit they are
    /// not served, so a flood of them costs the daemon no descriptors and no inotify watches.
    package var maxMailboxes: Int = 1_000
    /// Bytes of disk one document may take (`max_file_allocation`): the smaller of its size and its
    /// allocated blocks (a sparse file's copy keeps its holes, so it takes about what its source
    /// takes). Over it, an inbox's file is quarantined and `open` answered `bad-request`. Unset, it
    /// is `max_file_size`, which bounds it anyway; set lower, it lets `max_file_size` admit large
    /// sparse files (disk images) while the disk each copy takes stays bounded.
    package var maxFileAllocation: Int64 = 4 << 30
    /// Bytes a URL of an `open` request may have (`max_url_length`); a longer one is refused with
    /// `bad-request`. Every URL recorded stays in the ledger until its handler takes it.
    package var maxURLLength: Int = 8 << 10
    /// `open` requests one uid may make per minute (`open_requests_per_minute`), a refill of a
    /// sixtieth of it every second; past it, `over-limit`.
    package var openRequestsPerMinute: Int = 600
    /// Bytes of files one uid may `open` per minute (`open_bytes_per_minute`): a file counts its
    /// size, holes included (hashing them is work too). A request is taken while the uid has any
    /// of it left, so one file may be larger than it (the uid then waits longer).
    package var openBytesPerMinute: Int64 = 16 << 30
    /// Deliveries a handler may be owed (committed, not yet acknowledged) before more are refused
    /// (`max_pending_per_handler`): `open` gets `over-limit`, an inbox's file waits in its inbox.
    package var maxPendingPerHandler: Int = 100_000
    /// Bytes (file sizes and URL lengths) a handler may be owed (`max_pending_bytes_per_handler`).
    package var maxPendingBytesPerHandler: Int64 = 64 << 30
    /// Deliveries one uid's `open` requests may have owed to handlers (`max_pending_per_uid`).
    package var maxPendingPerUID: Int = 1_000
    /// Days a document's history is kept in the ledger after it was settled (`history_days`).
    package var historyDays: Int = 30
    /// Bytes one uid's `open` requests may have owed to handlers (`max_pending_bytes_per_uid`).
    package var maxPendingBytesPerUID: Int64 = 8 << 30
    /// Whether root's `open` requests count against the per-uid budgets above (`limit_root`);
    /// by default root is not limited by them (the per-handler caps hold for everyone).
    package var limitRoot: Bool = false
    /// `launch_flag_directory`: launch handlers through systemd by writing `<folder>/<DocRouteUser>`
    /// (watched by `docroute-handler@<DocRouteUser>.path`) instead of starting them; nil starts them.
    package var launchFlagDirectory: String? = nil
    /// The `[fleet]` table: this host shares a PostgreSQL database with other hosts; nil (no
    /// table) is the single host of the SQLite ledger alone.
    package var fleet: FleetConfiguration? = nil
    /// The file it was read from (`<embedded default>` for the built-in one).
    package var file: String

    /// The configuration shipped in `config/docroute.toml`, compiled in so `docrouted` runs without one.
    package static let embeddedDefaultText = """
        socket = "/run/docroute/docroute.sock"
        state_directory = "/var/lib/docroute"
        containers_directory = "/var/lib/docroute/containers"
        handlers_directory = "/etc/docroute/handlers.d"
        quarantine_directory = "/var/spool/docroute/quarantine"
        max_file_size = 4294967296
        max_unacknowledged = 64
        max_connections = 256
        admin_group = "docroute"

        [[inbox]]
        path = "/var/spool/docroute/drop"
        kind = "directory"
        default_mailbox = "Inbox"
        source_application = "org.docroute.drop"

        [[inbox]]
        path = "/var/spool/docroute/mail"
        kind = "maildir"
        default_mailbox = "INBOX"
        source_application = "com.apple.mobilemail"
        """

    /// What ``file`` says for the embedded default.
    package static let embeddedDefaultName = "<embedded default>"

    /// The embedded default.
    package static func embeddedDefault() throws(ConfigurationError) -> DaemonConfiguration {
        try parse(embeddedDefaultText, file: embeddedDefaultName)
    }

    /// Reads and checks a configuration file.
    package static func load(path: String) throws(ConfigurationError) -> DaemonConfiguration {
        guard let data = FileManager.default.contents(atPath: path) else {
            let exists = FileManager.default.fileExists(atPath: path)
            throw ConfigurationError(code: .unreadable, inputFile: path,
                                     message: exists ? "cannot be read (permissions?)" : "no such file; pass --config with an existing file or omit it to use the embedded default")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigurationError(code: .syntax, inputFile: path, message: "is not UTF-8 text")
        }
        return try parse(text, file: path)
    }

    static let topLevelKeys: Set<String> = [
        "socket", "state_directory", "containers_directory", "handlers_directory", "quarantine_directory",
        "max_file_size", "max_unacknowledged", "max_connections", "max_queued_files", "admin_group", "metrics_textfile", "inbox",
        "max_connections_per_uid", "reserved_handler_connections", "idle_timeout", "max_unfinished_line_bytes",
        "max_package_depth", "max_package_entries", "max_mailboxes",
        "launch_flag_directory",
        "max_file_allocation", "max_url_length", "open_requests_per_minute", "open_bytes_per_minute",
        "max_pending_per_handler", "max_pending_bytes_per_handler", "max_pending_per_uid", "max_pending_bytes_per_uid",
        "limit_root", "history_days", "fleet",
    ]
    static let inboxKeys: Set<String> = ["path", "kind", "default_mailbox", "source_application"]

    /// Parses TOML text; errors name `file`, the line and the key.
    package static func parse(_ text: String, file: String) throws(ConfigurationError) -> DaemonConfiguration {
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw syntaxError(error, text: text, file: file)
        } catch {
            throw ConfigurationError(code: .syntax, inputFile: file, message: "TOML syntax: \(error)")
        }
        let locator = KeyLocator(text: text)
        func fail(_ code: ConfigurationError.Code, _ key: String, _ message: String, occurrence: Int = 0) -> ConfigurationError {
            ConfigurationError(code: code, inputFile: file, inputLine: locator.line(of: key, occurrence: occurrence), inputKey: key, message: message)
        }
        for key in table.keys where !topLevelKeys.contains(key) {
            throw fail(.unknownKey, key, "unknown key; known keys are \(topLevelKeys.sorted().joined(separator: ", "))")
        }
        func string(_ key: String, in table: TOMLTable, occurrence: Int = 0, prefix: String = "") throws(ConfigurationError) -> String? {
            guard let value = table[key] else { return nil }
            guard let string = value.string else { throw fail(.wrongType, prefix + key, "expected a string, found \(value.type)", occurrence: occurrence) }
            return string
        }
        func path(_ key: String, in table: TOMLTable, default fallback: String?, occurrence: Int = 0, prefix: String = "") throws(ConfigurationError) -> String {
            guard let value = try string(key, in: table, occurrence: occurrence, prefix: prefix) ?? fallback else {
                throw ConfigurationError(code: .missingKey, inputFile: file, inputKey: prefix + key, message: "required; give an absolute path")
            }
            guard value.hasPrefix("/") else { throw fail(.invalidValue, prefix + key, "'\(value)' must be an absolute path", occurrence: occurrence) }
            return value
        }
        func integer(_ key: String, default fallback: Int64, minimum: Int64) throws(ConfigurationError) -> Int64 {
            guard let value = table[key] else { return fallback }
            guard let number = value.int else { throw fail(.wrongType, key, "expected an integer, found \(value.type)") }
            guard Int64(number) >= minimum else { throw fail(.invalidValue, key, "must be at least \(minimum)") }
            return Int64(number)
        }

        let stateDirectory = try path("state_directory", in: table, default: "/var/lib/docroute")
        var configuration = DaemonConfiguration(
            socket: try path("socket", in: table, default: "/run/docroute/docroute.sock"),
            stateDirectory: stateDirectory,
            containersDirectory: try path("containers_directory", in: table, default: stateDirectory + "/containers"),
            handlersDirectory: try path("handlers_directory", in: table, default: "/etc/docroute/handlers.d"),
            quarantineDirectory: try path("quarantine_directory", in: table, default: stateDirectory + "/quarantine"),
            maxFileSize: try integer("max_file_size", default: 4 << 30, minimum: 0),
            maxUnacknowledged: Int(try integer("max_unacknowledged", default: 64, minimum: 1)),
            maxConnections: Int(try integer("max_connections", default: 256, minimum: 1)),
            adminGroup: try string("admin_group", in: table),
            inboxes: [], file: file)
        configuration.maxQueuedFiles = Int(try integer("max_queued_files", default: 4_096, minimum: Int64(DaemonConfiguration.intakeBatchLimit)))
        configuration.maxConnectionsPerUID = Int(try integer("max_connections_per_uid", default: 32, minimum: 1))
        if table["reserved_handler_connections"] != nil {
            let reserved = Int(try integer("reserved_handler_connections", default: 0, minimum: 0))
            guard reserved < configuration.maxConnections else {
                throw fail(.invalidValue, "reserved_handler_connections", "must be less than max_connections (\(configuration.maxConnections)), or no one else could connect")
            }
            configuration.reservedHandlerConnections = reserved
        }
        configuration.idleTimeoutSeconds = Int(try integer("idle_timeout", default: 60, minimum: 1))
        configuration.maxUnfinishedLineBytes = Int(try integer("max_unfinished_line_bytes", default: 16 << 20, minimum: Int64(WireProtocol.maximumLineLength + 1)))
        configuration.maxPackageDepth = Int(try integer("max_package_depth", default: 256, minimum: 1))
        configuration.maxPackageEntries = Int(try integer("max_package_entries", default: 100_000, minimum: 1))
        configuration.maxMailboxes = Int(try integer("max_mailboxes", default: 1_000, minimum: 1))
        configuration.maxFileAllocation = try integer("max_file_allocation", default: configuration.maxFileSize, minimum: 0)
        configuration.maxURLLength = Int(try integer("max_url_length", default: 8 << 10, minimum: 16))
        configuration.openRequestsPerMinute = Int(try integer("open_requests_per_minute", default: 600, minimum: 1))
        configuration.openBytesPerMinute = try integer("open_bytes_per_minute", default: 16 << 30, minimum: 1)
        configuration.maxPendingPerHandler = Int(try integer("max_pending_per_handler", default: 100_000, minimum: 1))
        configuration.maxPendingBytesPerHandler = try integer("max_pending_bytes_per_handler", default: 64 << 30, minimum: 1)
        configuration.maxPendingPerUID = Int(try integer("max_pending_per_uid", default: 1_000, minimum: 1))
        configuration.historyDays = Int(try integer("history_days", default: 30, minimum: 1))
        configuration.maxPendingBytesPerUID = try integer("max_pending_bytes_per_uid", default: 8 << 30, minimum: 1)
        if let value = table["limit_root"] {
            guard let flag = value.bool else { throw fail(.wrongType, "limit_root", "expected true or false, found \(value.type)") }
            configuration.limitRoot = flag
        }
        if table["metrics_textfile"] != nil {
            let textfile = try path("metrics_textfile", in: table, default: nil)
            guard !textfile.hasSuffix("/") else {
                throw fail(.invalidValue, "metrics_textfile", "'\(textfile)' names a folder; name the file, e.g. /var/lib/prometheus/node-exporter/docroute.prom")
            }
            configuration.metricsTextfile = textfile
        }
        if table["launch_flag_directory"] != nil {
            configuration.launchFlagDirectory = try path("launch_flag_directory", in: table, default: nil)
        }

        if let value = table["fleet"] {
            configuration.fleet = try parseFleet(value, file: file, locator: locator)
        }

        if let value = table["inbox"] {
            guard let array = value.array else { throw fail(.wrongType, "inbox", "expected [[inbox]] tables, found \(value.type)") }
            for index in 0..<array.count {
                let prefix = "inbox[\(index)]."
                guard let inbox = array[index].table else { throw fail(.wrongType, "inbox", "expected a table in [[inbox]] number \(index + 1)") }
                for key in inbox.keys where !inboxKeys.contains(key) {
                    throw fail(.unknownKey, prefix + key, "unknown key; an inbox has \(inboxKeys.sorted().joined(separator: ", "))", occurrence: index)
                }
                let kindText = try string("kind", in: inbox, occurrence: index, prefix: prefix) ?? "directory"
                guard let kind = InboxConfiguration.Kind(rawValue: kindText) else {
                    throw fail(.invalidValue, prefix + "kind", "'\(kindText)' is not an inbox kind; use \"directory\" or \"maildir\"", occurrence: index)
                }
                let mailbox = try string("default_mailbox", in: inbox, occurrence: index, prefix: prefix) ?? (kind == .maildir ? "INBOX" : "Inbox")
                guard Self.isValidMailbox(mailbox) else {
                    throw fail(.invalidValue, prefix + "default_mailbox", "'\(mailbox)' cannot be a folder name (no '/', not '.' or '..', not empty)", occurrence: index)
                }
                configuration.inboxes.append(InboxConfiguration(
                    path: try path("path", in: inbox, default: nil, occurrence: index, prefix: prefix),
                    kind: kind, defaultMailbox: mailbox,
                    sourceApplication: try string("source_application", in: inbox, occurrence: index, prefix: prefix) ?? "org.docroute.drop"))
            }
        }
        var seen: Set<String> = []
        for (index, inbox) in configuration.inboxes.enumerated() where !seen.insert(inbox.path).inserted {
            throw fail(.invalidValue, "inbox[\(index)].path", "'\(inbox.path)' is configured twice", occurrence: index)
        }
        return configuration
    }

    /// A mailbox becomes one folder name in the sandbox.
    package static func isValidMailbox(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.contains("/") && !name.utf8.contains(0) && name.utf8.count <= 255
    }

    /// Finds the line where a key is written, for messages (TOMLKit keeps no positions for values).
    struct KeyLocator {
        let lines: [Substring]

        init(text: String) {
            lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        }

        /// `key` may be `inbox[2].kind`: the n-th `[[inbox]]` block's `kind` line; `fleet.database`:
        /// the line in the `[fleet]` table; `fleet`: the table's header.
        func line(of key: String, occurrence: Int = 0) -> Int? {
            var name = Substring(key)
            var start = 0
            let header = lines.firstIndex { $0.trimmingCharacters(in: .whitespaces).hasPrefix("[fleet]") }
            if key == "fleet", let header { return header + 1 }
            if key.hasPrefix("fleet.") {
                guard let header else { return nil }
                name = key.dropFirst("fleet.".count)
                start = header + 1
            }
            if let dot = key.lastIndex(of: "."), key.hasPrefix("inbox[") {
                name = key[key.index(after: dot)...]
                var seen = -1
                for (index, line) in lines.enumerated() where line.trimmingCharacters(in: .whitespaces).hasPrefix("[[inbox]]") {
                    seen += 1
                    if seen == occurrence { start = index; break }
                }
            }
            for index in start..<lines.count {
                let trimmed = lines[index].drop { $0 == " " || $0 == "\t" }
                if trimmed.hasPrefix(name) {
                    let rest = trimmed.dropFirst(name.count).drop { $0 == " " || $0 == "\t" }
                    if rest.hasPrefix("=") { return index + 1 }
                }
                if name == "inbox" && trimmed.hasPrefix("[[inbox]]") || name == "inbox" && trimmed.hasPrefix("inbox") { return index + 1 }
            }
            return nil
        }
    }
}
