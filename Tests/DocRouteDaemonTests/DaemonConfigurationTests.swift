import DocRouteTestSupport
import Foundation
import Testing
@testable import DocRouteConfiguration
@testable import DocRouteServer

/// What an administrator gets from a configuration that leaves keys out: the defaults docroute.toml(5)
/// promises. The man page is read, not copied, so the page and the parser cannot drift apart unseen.
@Suite struct DaemonConfigurationTests {
    static let manPage = Fixtures.repositoryRoot + "/docs/man/docroute.toml.5"

    /// Every `.It Cm key` of the man page with the text of its `Default` sentence, macros removed:
    /// `socket` → `/run/docroute/docroute.sock`, `max_file_size` → `4294967296 (4 GiB)`.
    static func documentedDefaults() throws -> [String: String] {
        let lines = try String(contentsOfFile: manPage, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        var defaults: [String: String] = [:]
        var key: String?
        for (index, line) in lines.enumerated() {
            if line.hasPrefix(".It Cm ") {
                key = line.split(separator: " ").dropFirst(2).first.map(String.init)
                continue
            }
            guard let current = key, defaults[current] == nil, line.hasPrefix("Default") else { continue }
            // "Default 64." on one line, or "Default" then ".Pa /path ." / ".Qq word" on the next;
            // "Default: an eighth of" is prose, kept as written.
            var text = String(line.dropFirst("Default".count)).trimmingCharacters(in: .whitespaces)
            if text.isEmpty, index + 1 < lines.count { text = String(lines[index + 1]) }
            for macro in [".Pa ", ".Qq ", ".Cm "] where text.hasPrefix(macro) { text.removeFirst(macro.count) }
            if text.hasSuffix(" .") { text.removeLast(2) } else if text.hasSuffix(".") { text.removeLast() }
            defaults[current] = text
        }
        return defaults
    }

    /// The leading number of a documented default (`4294967296 (4 GiB)` → 4294967296).
    static func number(_ text: String?) -> Int64? {
        text.flatMap { Int64($0.prefix { $0.isNumber }) }
    }

    @Test func anEmptyFileGivesTheDefaultsTheManPageDocuments() throws {
        let documented = try Self.documentedDefaults()
        let configuration = try DaemonConfiguration.parse("", file: "empty.toml")
        func path(_ text: String?) -> String? {
            text?.replacingOccurrences(of: "<state_directory>", with: configuration.stateDirectory)
        }
        #expect(configuration.socket == path(documented["socket"]))
        #expect(configuration.stateDirectory == path(documented["state_directory"]))
        #expect(configuration.containersDirectory == path(documented["containers_directory"]))
        #expect(configuration.handlersDirectory == path(documented["handlers_directory"]))
        #expect(configuration.quarantineDirectory == path(documented["quarantine_directory"]))
        #expect(configuration.maxFileSize == Self.number(documented["max_file_size"]))
        let counts: [(String, Int)] = [
            ("max_unacknowledged", configuration.maxUnacknowledged),
            ("max_connections", configuration.maxConnections),
            ("max_connections_per_uid", configuration.maxConnectionsPerUID),
            ("idle_timeout", configuration.idleTimeoutSeconds),
            ("max_unfinished_line_bytes", configuration.maxUnfinishedLineBytes),
            ("max_package_depth", configuration.maxPackageDepth),
            ("max_package_entries", configuration.maxPackageEntries),
            ("max_queued_files", configuration.maxQueuedFiles),
            ("max_url_length", configuration.maxURLLength),
            ("open_requests_per_minute", configuration.openRequestsPerMinute),
            ("open_bytes_per_minute", Int(configuration.openBytesPerMinute)),
            ("max_pending_per_handler", configuration.maxPendingPerHandler),
            ("max_pending_bytes_per_handler", Int(configuration.maxPendingBytesPerHandler)),
            ("max_pending_per_uid", configuration.maxPendingPerUID),
            ("max_pending_bytes_per_uid", Int(configuration.maxPendingBytesPerUID)),
        ]
        for (key, value) in counts {
            let expected = try #require(Self.number(documented[key]), "docroute.toml(5) gives no number for \(key): \(documented[key] ?? "no Default")")
            #expect(Int64(value) == expected, "\(key)")
        }
        // "Default: an eighth of max_connections", and no default where the page says there is none.
        #expect(documented["reserved_handler_connections"]?.hasPrefix(": an eighth of") == true)
        #expect(configuration.reservedHandlerConnections == nil)
        #expect(ConnectionLimits(configuration).reservedForHandlers == configuration.maxConnections / 8)
        #expect(configuration.adminGroup == nil, "docroute.toml(5): no default in the parser")
        #expect(configuration.metricsTextfile == nil, "docroute.toml(5): absent, no file")
        #expect(configuration.launchFlagDirectory == nil, "docroute.toml(5): absent, docrouted starts handlers itself")
        #expect(configuration.inboxes.isEmpty)
        #expect(configuration.file == "empty.toml")
        // "Default: the value of max_file_size", and "Default false".
        #expect(documented["max_file_allocation"]?.hasPrefix(": the value of") == true)
        #expect(configuration.maxFileAllocation == configuration.maxFileSize)
        #expect(documented["limit_root"] == "false" && configuration.limitRoot == false)
    }

    /// The limits on what one user may ask of `open`, and on what may wait for a handler: read
    /// as written, `max_file_allocation` following `max_file_size` unless given, and a wrong
    /// type or value named with its key.
    @Test func theBudgetsAreReadAndCheckedWithTheirKeys() throws {
        let configuration = try DaemonConfiguration.parse("""
            max_file_size = 1000000
            max_url_length = 100
            open_requests_per_minute = 5
            open_bytes_per_minute = 7000
            max_pending_per_handler = 3
            max_pending_bytes_per_handler = 4000
            max_pending_per_uid = 2
            max_pending_bytes_per_uid = 3000
            limit_root = true
            """, file: "t.toml")
        #expect(configuration.maxFileAllocation == 1_000_000)
        #expect(configuration.maxURLLength == 100 && configuration.openRequestsPerMinute == 5 && configuration.openBytesPerMinute == 7000)
        #expect(configuration.maxPendingPerHandler == 3 && configuration.maxPendingBytesPerHandler == 4000)
        #expect(configuration.maxPendingPerUID == 2 && configuration.maxPendingBytesPerUID == 3000 && configuration.limitRoot)
        #expect(try DaemonConfiguration.parse("max_file_allocation = 4096", file: "t").maxFileAllocation == 4096)
        let wrongType = #expect(throws: ConfigurationError.self) { try DaemonConfiguration.parse("limit_root = 1", file: "t.toml") }
        #expect(wrongType?.inputKey == "limit_root" && wrongType?.inputLine == 1)
        let tooSmall = #expect(throws: ConfigurationError.self) { try DaemonConfiguration.parse("\nmax_pending_per_uid = 0", file: "t.toml") }
        #expect(tooSmall?.inputKey == "max_pending_per_uid" && tooSmall?.inputLine == 2)
    }

    /// The defaults the README states in passing: "`max_connections` (256)", "`max_queued_files`
    /// (default 16,384)", "`idle_timeout` (60 s)", "`max_unfinished_line_bytes` (16 MiB)",
    /// "`handlers_directory` (default `/etc/docroute/handlers.d`)".
    static func readmeDefaults() throws -> [String: String] {
        let text = try String(contentsOfFile: Fixtures.repositoryRoot + "/README.md", encoding: .utf8)
        let pattern = try NSRegularExpression(pattern: #"`([a-z_]+)`\s+\((?:default\s+)?(?:`(/[^`]+)`|([0-9][0-9,]*)( MiB| s)?)\)"#)
        var defaults: [String: String] = [:]
        for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
            func group(_ index: Int) -> String? { Range(match.range(at: index), in: text).map { String(text[$0]) } }
            guard let key = group(1) else { continue }
            if let path = group(2) {
                defaults[key] = path
            } else if let digits = group(3), let number = Int(digits.replacingOccurrences(of: ",", with: "")) {
                defaults[key] = String(group(4) == " MiB" ? number << 20 : number)
            }
        }
        return defaults
    }

    @Test func theREADMEStatesTheSameDefaults() throws {
        let stated = try Self.readmeDefaults()
        let configuration = try DaemonConfiguration.parse("", file: "empty.toml")
        let actual: [String: String] = [
            "socket": configuration.socket, "state_directory": configuration.stateDirectory,
            "containers_directory": configuration.containersDirectory, "handlers_directory": configuration.handlersDirectory,
            "quarantine_directory": configuration.quarantineDirectory, "max_file_size": String(configuration.maxFileSize),
            "max_unacknowledged": String(configuration.maxUnacknowledged), "max_connections": String(configuration.maxConnections),
            "max_connections_per_uid": String(configuration.maxConnectionsPerUID), "idle_timeout": String(configuration.idleTimeoutSeconds),
            "max_unfinished_line_bytes": String(configuration.maxUnfinishedLineBytes), "max_package_depth": String(configuration.maxPackageDepth),
            "max_package_entries": String(configuration.maxPackageEntries), "max_queued_files": String(configuration.maxQueuedFiles),
            "max_url_length": String(configuration.maxURLLength), "open_requests_per_minute": String(configuration.openRequestsPerMinute),
            "max_pending_per_handler": String(configuration.maxPendingPerHandler), "max_pending_per_uid": String(configuration.maxPendingPerUID),
        ]
        let compared = stated.filter { actual[$0.key] != nil }
        #expect(compared.count >= 8, "the README's defaults were not found: \(stated)")
        for (key, value) in compared.sorted(by: { $0.key < $1.key }) {
            #expect(value == actual[key], "README says \(key) is \(value)")
        }
    }

    @Test func anInboxGivenOnlyItsPathGetsTheDocumentedDefaults() throws {
        let documented = try Self.documentedDefaults()
        let configuration = try DaemonConfiguration.parse("[[inbox]]\npath = \"/srv/drop\"\n[[inbox]]\npath = \"/srv/mail\"\nkind = \"maildir\"\n", file: "t")
        let drop = try #require(configuration.inboxes.first)
        let mail = try #require(configuration.inboxes.last)
        #expect(drop.kind.rawValue == documented["kind"])
        #expect(drop.sourceApplication == documented["source_application"])
        // The page gives one default per kind: "Inbox" for a drop folder, "INBOX" for a Maildir.
        #expect(documented["default_mailbox"] == drop.defaultMailbox)
        #expect(drop.defaultMailbox == "Inbox" && mail.defaultMailbox == "INBOX")
        #expect(mail.sourceApplication == drop.sourceApplication)
    }

    @Test func theManPageDocumentsExactlyTheKeysTheParserTakes() throws {
        let documented = try String(contentsOfFile: Self.manPage, encoding: .utf8).split(separator: "\n")
            .filter { $0.hasPrefix(".It Cm ") }.compactMap { $0.split(separator: " ").dropFirst(2).first.map(String.init) }
        let keys = Set(documented)
        // The tables' keys: [[inbox]] and [fleet], each documented under its own heading.
        let tableKeys = DaemonConfiguration.inboxKeys.union(DaemonConfiguration.fleetKeys)
        #expect(keys.subtracting(tableKeys) == DaemonConfiguration.topLevelKeys.subtracting(["inbox", "fleet"]))
        #expect(DaemonConfiguration.inboxKeys.isSubset(of: keys))
        #expect(DaemonConfiguration.fleetKeys.isSubset(of: keys))
    }

    /// docrouted run without a file uses the compiled-in copy of config/docroute.toml: the same
    /// folders, limits and inboxes as the shipped file, but for the one key that only makes sense
    /// under systemd's path units.
    @Test func theBuiltInConfigurationIsTheShippedFile() throws {
        let shipped = try DaemonConfiguration.load(path: Fixtures.repositoryRoot + "/config/docroute.toml")
        var embedded = try DaemonConfiguration.embeddedDefault()
        #expect(embedded.file == "<embedded default>")
        #expect(shipped.launchFlagDirectory == "/run/docroute/launch")
        #expect(embedded.launchFlagDirectory == nil, "without a file docrouted starts handlers itself")
        embedded.file = shipped.file
        embedded.launchFlagDirectory = shipped.launchFlagDirectory
        #expect(embedded == shipped)
    }

    @Test func aMissingFileSaysWhatToDo() throws {
        try TemporaryFolder.with("config") { folder in
            let path = folder.string("docroute.toml")
            #expect {
                try DaemonConfiguration.load(path: path)
            } throws: { error in
                let text = "\(error)"
                return text.contains(path) && text.contains("pass --config with an existing file or omit it to use the embedded default")
            }
        }
    }
}
