import ArgumentParser
import DocRouteClient

/// `docroutectl status`: what docrouted is doing now.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Ask docrouted for its handlers, inboxes and failed manifests.",
        discussion: """
            For each handler: whether a connection is subscribed as it ("running"), how many \
            documents wait for an acknowledgement, how many of those are in flight on its \
            connection, and how many it got today. For each inbox: its folder and mailboxes. \
            Status is for root and members of docrouted's admin_group. --json prints docrouted's \
            reply as one line of JSON.
            """)

    @OptionGroup var daemon: DaemonSocketOptions

    @Flag(help: "Print docrouted's status reply as one JSON line.")
    var json = false

    func run() async throws {
        let connection: DocRouteConnection
        do {
            connection = try await daemon.connect()
        } catch {
            throw error.report("connect to docrouted")
        }
        let report: StatusReport
        do {
            report = try await connection.status()
        } catch {
            await connection.close()
            throw error.report("get the status of docrouted")
        }
        await connection.close()
        if json {
            let reply = DaemonMessage.status(id: nil, handlers: report.handlers, inboxes: report.inboxes, extra: report.extra)
            StandardStreams.output(reply.encodedLine())
        } else {
            printSummary(report)
        }
    }

    private func printSummary(_ report: StatusReport) {
        var headline = [report.extra["daemon"]?.stringValue ?? "docrouted", "on", daemon.path]
        if let today = report.extra["deliveredToday"]?.integerValue { headline.append("· delivered today \(today)") }
        if let since = report.extra["deliveredSinceStart"]?.integerValue { headline.append("· since start \(since)") }
        print(headline.joined(separator: " "))
        print()
        let ledger = report.extra["ledger"]?.objectValue ?? [:]
        var rows = [["HANDLER", "SUBSCRIBED", "PENDING", "IN FLIGHT", "DELIVERED TODAY"]]
        for handler in report.handlers.sorted(by: { $0.bundleIdentifier < $1.bundleIdentifier }) {
            let today = handler.extra["deliveredToday"]?.integerValue
                ?? ledger[handler.bundleIdentifier]?.objectValue?["deliveredToday"]?.integerValue
            rows.append([
                handler.bundleIdentifier, handler.subscribed ? "yes" : "no", String(handler.pending),
                handler.extra["inFlight"]?.integerValue.map(String.init) ?? "-",
                today.map(String.init) ?? (ledger.isEmpty ? "-" : "0"),
            ])
        }
        if report.handlers.isEmpty { rows.append(["(no handlers registered)", "", "", "", ""]) }
        TablePrinter.print(rows)
        print()
        var inboxRows = [["INBOX", "KIND", "MAILBOXES"]]
        for inbox in report.inboxes {
            inboxRows.append([inbox.path, inbox.extra["kind"]?.stringValue ?? "-", inbox.mailboxes.joined(separator: ", ")])
        }
        TablePrinter.print(inboxRows)
        let failures = report.extra["failedManifests"].flatMap(\.arrayValue) ?? []
        print()
        if failures.isEmpty {
            print("failed manifests: none")
        } else {
            print("failed manifests:")
            for failure in failures { print("  \(failure.stringValue ?? "\(failure)")") }
        }
    }
}

extension JSONValue {
    fileprivate var integerValue: Int64? {
        if case .integer(let value) = self { value } else { nil }
    }

    fileprivate var arrayValue: [JSONValue]? {
        if case .array(let value) = self { value } else { nil }
    }
}
