import ArgumentParser
import DocRouteClient
import DocRouteLedger
import DocRouteProtocol
import DocRoutePlatform
import Foundation
import SystemPackage

/// `docroutectl history`: where a document went, from the ledger's events.
struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Show where documents went: seen, typed, routed, committed, told, acknowledged or declined, source freed.",
        discussion: """
            Give a document's name as it arrived (notes.txt), a path it had (its source in an inbox \
            or its copy in a sandbox), or its delivery id; or --handler, --since/--until or --state \
            alone or together. Every condition given must match. Each document is printed as a \
            header (name, delivery id, state, handler) and one line per event in local time; a \
            mail attachment shows its message id and part; a quarantined file or a skipped mail \
            part shows why. --json prints one JSON object per document per line.

            Times: HH:MM or HH:MM:SS (today), YYYY-MM-DD HH:MM[:SS], YYYY-MM-DD (its midnight), all \
            local time, or how long ago: 90s, 15m, 1h, 2d.

            docroutectl asks docrouted over its socket (the `history` request, for root and \
            members of its admin_group) when docrouted answers, and otherwise reads the ledger \
            file itself, read-only (<state_directory>/ledger.sqlite of the configuration, which \
            needs root or read access to the state directory); --offline always reads the file. \
            Exits 1 when nothing matches, 64 for a query it cannot read.
            """)

    @Argument(help: ArgumentHelp("A document's name, a path it had, or its delivery id.", valueName: "name|path|delivery-id"))
    var document: String?

    @Option(name: .customLong("handler"), help: ArgumentHelp("Only documents routed to this handler.", valueName: "bundle-id"))
    var bundleIdentifier: String?

    @Option(help: ArgumentHelp("Only documents seen at or after this time.", valueName: "time"))
    var since: String?

    @Option(help: ArgumentHelp("Only documents seen before this time.", valueName: "time"))
    var until: String?

    @Option(help: ArgumentHelp("Only documents now in this state: \(DocumentHistory.State.allCases.map(\.rawValue).joined(separator: ", ")).", valueName: "state"))
    var state: String?

    @Option(help: ArgumentHelp("The most documents shown, newest first.", valueName: "n"))
    var limit: Int = 20

    @Flag(help: "One JSON object per document per line.")
    var json = false

    @Flag(help: "Read the ledger file even when docrouted answers.")
    var offline = false

    @OptionGroup var daemon: DaemonSocketOptions

    /// The exit status of a query that cannot be read (EX_USAGE).
    static let usageStatus: Int32 = 64

    func validate() throws {
        guard document != nil || bundleIdentifier != nil || since != nil || until != nil || state != nil else {
            throw ValidationError("give a document's name, path or delivery id, or --handler, --since or --state")
        }
        guard limit >= 1 else { throw ValidationError("--limit must be at least 1") }
    }

    func run() async throws {
        let query = try Self.query(document: document, bundleIdentifier: bundleIdentifier, since: since, until: until,
                                   state: state, limit: limit)
        var documents: [DocumentHistory]?
        var fleetUnread: String?
        if !offline, let connection = try? await daemon.connect() {
            defer { Task { await connection.close() } }
            do {
                let reply = try await connection.historyReply(Self.request(query))
                documents = reply.documents.compactMap(DocumentHistory.init(json:))
                fleetUnread = Self.fleetUnread(reply.fleet)
            } catch where error.code == .daemon(.notPermitted) {
                StandardStreams.error("\(error.message)\n  Run as root or as a member of docrouted's admin_group.")
                throw ExitCode.failure
            } catch where error.code == .daemon(.badRequest) {
                // A daemon from before the `history` request: read the file instead.
                documents = nil
            } catch {
                throw error.report("get the history from docrouted")
            }
        }
        let found: [DocumentHistory]
        if let documents {
            found = documents
        } else {
            found = try readLedger(query)
        }
        if let fleetUnread {
            // Said before the documents, on standard error too when --json keeps standard output for JSON.
            let line = "\(fleetUnread); this host's ledger alone is shown"
            if json || found.isEmpty { StandardStreams.error(line) } else { StandardStreams.output(line: line + "\n") }
        }
        guard !found.isEmpty else {
            StandardStreams.error("no document matches \(Self.describe(query)) in the ledger's history")
            throw ExitCode.failure
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            for document in found {
                var object = document.json
                if let fleetUnread, case .object(var members) = object {
                    members["fleetUnread"] = .string(fleetUnread)
                    object = .object(members)
                }
                let data = try encoder.encode(object)
                StandardStreams.output(Array(data) + [UInt8(ascii: "\n")])
            }
            return
        }
        let text = found.map { $0.timeline().joined(separator: "\n") }.joined(separator: "\n\n")
        StandardStreams.output(line: text)
    }

    /// The history from the ledger file, read-only.
    func readLedger(_ query: HistoryQuery) throws -> [DocumentHistory] {
        let loaded = try daemon.configurationOptions.load()
        let path = loaded.configuration.stateDirectory + "/" + DeliveryLedger.fileName
        let denied = CtlError("""
            cannot read the ledger \(path): permission denied
              Run as root or as a member of docrouted's admin_group (with docrouted running, docroutectl \
            asks it over its socket instead).
            """)
        do {
            guard try FilePath(path).status(followingSymbolicLinks: true) != nil else {
                throw CtlError("""
                    there is no ledger at \(path) (state_directory of \(loaded.origin))
                      docrouted has not run with this configuration yet, or give its configuration with --config PATH.
                    """)
            }
        } catch let error as CtlError {
            throw error
        } catch Errno.permissionDenied, Errno.notPermitted {
            throw denied
        } catch {
            throw CtlError("cannot read the ledger \(path): \(error)")
        }
        guard FileManager.default.isReadableFile(atPath: path) else { throw denied }
        do {
            return try DeliveryLedger.readHistory(query, ledgerAt: path)
        } catch {
            throw CtlError("cannot read the history in \(path): \(error)")
        }
    }

    /// The query the arguments ask for; a time or state that does not read is reported with what
    /// is accepted, and exits 64.
    static func query(document: String?, bundleIdentifier: String?, since: String?, until: String?, state: String?,
                      limit: Int, now: Date = Date()) throws -> HistoryQuery {
        var query = HistoryQuery(bundleIdentifier: bundleIdentifier, limit: limit)
        if let document {
            if let deliveryID = UUID(uuidString: document) {
                query.deliveryID = deliveryID
            } else if document.contains("/") {
                let absolute = document.hasPrefix("/") ? document : FileManager.default.currentDirectoryPath + "/" + document
                query.path = (absolute as NSString).standardizingPath
            } else {
                query.name = document
            }
        }
        for (option, text) in [("--since", since), ("--until", until)] {
            guard let text else { continue }
            guard let date = HistoryTime.parse(text, now: now) else {
                StandardStreams.error("\(option) \(text): not a time docroutectl reads\n  Accepted: \(HistoryTime.acceptedForms).")
                throw ExitCode(usageStatus)
            }
            if option == "--since" { query.since = date } else { query.until = date }
        }
        if let state {
            guard let value = DocumentHistory.State(rawValue: state) else {
                StandardStreams.error("--state \(state): not a state\n  Accepted: \(DocumentHistory.State.allCases.map(\.rawValue).joined(separator: ", ")).")
                throw ExitCode(usageStatus)
            }
            query.state = value
        }
        return query
    }

    /// What a reply's `fleet` says when the fleet's part of the history could not be read; nil
    /// when it was read, or the host is not in a fleet.
    static func fleetUnread(_ fleet: JSONValue?) -> String? {
        guard let object = fleet?.objectValue, object["readable"] == .bool(false) else { return nil }
        return object["error"]?.stringValue ?? "the fleet's part of the history could not be read"
    }

    /// The query as the socket's `history` request carries it.
    static func request(_ query: HistoryQuery) -> HistoryRequest {
        HistoryRequest(deliveryID: query.deliveryID?.uuidString, name: query.name, path: query.path, bundleIdentifier: query.bundleIdentifier,
                       since: query.since.map(DocumentHistory.timestamp), until: query.until.map(DocumentHistory.timestamp),
                       state: query.state?.rawValue, limit: query.limit)
    }

    /// The query in words, for "no document matches …".
    static func describe(_ query: HistoryQuery) -> String {
        var parts: [String] = []
        if let name = query.name { parts.append("the name \(name)") }
        if let path = query.path { parts.append("the path \(path)") }
        if let deliveryID = query.deliveryID { parts.append("delivery \(deliveryID.protocolText)") }
        if let bundle = query.bundleIdentifier { parts.append("handler \(bundle)") }
        if let since = query.since { parts.append("seen since \(LocalTime(since).dayText) \(LocalTime(since).clockText)") }
        if let until = query.until { parts.append("seen before \(LocalTime(until).dayText) \(LocalTime(until).clockText)") }
        if let state = query.state { parts.append("state \(state.rawValue)") }
        return parts.joined(separator: ", ")
    }
}
