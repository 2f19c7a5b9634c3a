import DocRouteClient

/// The human form of a `status` reply: a headline, a progress bar while a scan or a backlog drain
/// runs, the handlers, the inboxes, the fleet's hosts (with `[fleet]`) and the failed manifests.
struct StatusView {
    let report: StatusReport
    let socketPath: String

    /// Every line, without trailing newlines.
    var lines: [String] {
        var lines = [headline]
        if let progress = report.extra["progress"]?.objectValue, let bar = Self.progressLine(progress) {
            lines.append(bar)
        }
        lines.append("")
        lines += handlerTable
        lines.append("")
        lines += inboxTable
        if let quarantine = report.extra["quarantineDirectory"]?.stringValue {
            // Where QUARANTINED files are, and how to see them.
            lines.append("quarantine: \(quarantine)  (docroutectl quarantine list)")
        }
        if let ledger = report.extra["ledgerBytes"]?.integerValue {
            // What requests and unacknowledged deliveries make grow (max_pending_*, max_url_length).
            lines.append("ledger: \(Self.bytes(ledger)) on disk")
        }
        if let restart = report.extra["needsRestart"]?.arrayValue?.compactMap(\.stringValue), !restart.isEmpty {
            lines.append("needs a restart: \(restart.joined(separator: ", ")) changed in the configuration; a reload cannot take them (systemctl restart docroute)")
        }
        if let fleet = report.extra["fleet"]?.objectValue {
            lines.append("")
            lines += Self.fleetLines(fleet)
        }
        lines.append("")
        let failures = report.extra["failedManifests"].flatMap(\.arrayValue) ?? []
        if failures.isEmpty {
            lines.append("failed manifests: none")
        } else {
            lines.append("failed manifests:")
            for failure in failures { lines.append("  \(failure.stringValue ?? "\(failure)")") }
        }
        return lines
    }

    var headline: String {
        var parts = [report.extra["daemon"]?.stringValue ?? "docrouted", "on", socketPath]
        if let today = report.extra["deliveredToday"]?.integerValue { parts.append("· delivered today \(Self.grouped(today))") }
        if let since = report.extra["deliveredSinceStart"]?.integerValue { parts.append("· since start \(Self.grouped(since))") }
        if let reclaim = report.extra["sourcesToReclaim"]?.integerValue, reclaim > 0 {
            parts.append("· \(Self.grouped(reclaim)) delivered sources to free")
        }
        return parts.joined(separator: " ")
    }

    var handlerTable: [String] {
        let ledger = report.extra["ledger"]?.objectValue ?? [:]
        // In a fleet: the hosts where each handler has live instances, this one included.
        let inFleet = report.handlers.contains { $0.hosts != nil }
        var header = ["HANDLER", "SUBSCRIBED", "PENDING", "IN FLIGHT", "DELIVERED TODAY", "DECLINED", "LAST ERROR"]
        if inFleet { header.insert("HOSTS", at: 2) }
        var rows = [header]
        for handler in report.handlers.sorted(by: { $0.bundleIdentifier < $1.bundleIdentifier }) {
            let today = handler.extra["deliveredToday"]?.integerValue
                ?? ledger[handler.bundleIdentifier]?.objectValue?["deliveredToday"]?.integerValue
            // Competing connections of one handler: how many.
            let competing: String? = handler.extra["instances"]?.integerValue.map { "yes (\($0) competing)" }
            var row: [String] = [
                handler.bundleIdentifier,
                handler.subscribed ? (competing ?? "yes") : "no",
                Self.grouped(Int64(handler.pending)),
                handler.extra["inFlight"]?.integerValue.map(Self.grouped) ?? "-",
                today.map(Self.grouped) ?? (ledger.isEmpty ? "-" : "0"),
                // Documents the handler answered with handled:false, as the ledger counts them.
                ledger[handler.bundleIdentifier]?.objectValue?["declined"]?.integerValue.map(Self.grouped) ?? (ledger.isEmpty ? "-" : "0"),
                handler.extra["lastError"]?.stringValue.map { Self.clipped($0, to: 72) } ?? "-",
            ]
            if inFleet {
                // Absent for one handler (the database unread): unknown, not nowhere.
                row.insert(handler.hosts.map { $0.isEmpty ? "none" : Self.listed($0, shown: 3) } ?? "?", at: 2)
            }
            rows.append(row)
        }
        if report.handlers.isEmpty { rows.append(["(no handlers registered)"] + Array(repeating: "", count: header.count - 1)) }
        return Self.table(rows)
    }

    var inboxTable: [String] {
        var rows = [["INBOX", "KIND", "WAITING", "QUARANTINED", "MAILBOXES"]]
        for inbox in report.inboxes {
            rows.append([
                inbox.path, inbox.extra["kind"]?.stringValue ?? "-",
                inbox.extra["waiting"]?.integerValue.map(Self.grouped) ?? "-",
                inbox.extra["quarantined"]?.integerValue.map(Self.grouped) ?? "-",
                Self.listed(inbox.mailboxes, shown: 8),
            ])
        }
        return Self.table(rows) + folderLimitLines
    }

    /// A line for each inbox at or near `max_mailboxes`: what is not served there, and why.
    var folderLimitLines: [String] {
        report.inboxes.compactMap { inbox in
            guard let watched = inbox.extra["watchedFolders"]?.integerValue, let limit = inbox.extra["maxMailboxes"]?.integerValue else { return nil }
            let notServed = inbox.extra["foldersNotServed"]?.integerValue ?? 0
            guard notServed > 0 || watched * 10 >= limit * 9 else { return nil }
            var line = "\(inbox.path): \(Self.grouped(watched)) of \(Self.grouped(limit)) folders watched (max_mailboxes)"
            if notServed > 0 { line += "; \(Self.grouped(notServed)) folders made past it are not served, their files wait there" }
            return line
        }
    }

    /// The first `shown` names, then how many more.
    /// The fleet as this host sees it: the database, what is owed, and a row per host.
    static func fleetLines(_ fleet: [String: JSONValue]) -> [String] {
        let host = fleet["host"]?.stringValue ?? "?"
        let database = fleet["database"]?.stringValue ?? "?"
        guard fleet["reachable"]?.boolValue ?? false else {
            return ["fleet: this host \(host); database \(database) NOT REACHABLE: \(fleet["error"]?.stringValue ?? "no answer")",
                    "  files wait in their inboxes until it answers (docrouted --check says why)"]
        }
        let owed = fleet["owed"]?.integerValue ?? 0
        let byHandler = (fleet["owedByHandler"]?.objectValue ?? [:]).compactMap { name, value in value.integerValue.map { "\(name) \(grouped($0))" } }.sorted()
        var lines = ["fleet: this host \(host); database \(database); owed \(grouped(owed))"
            + (byHandler.isEmpty ? "" : " (\(byHandler.joined(separator: ", ")))")]
        var rows = [["HOST", "LAST HEARTBEAT", "CLAIMED", "SUBSCRIBED HANDLERS", "CAN LAUNCH", "REGISTRY", "VERSION"]]
        for entry in fleet["hosts"]?.arrayValue ?? [] {
            guard let row = entry.objectValue else { continue }
            let name = row["name"]?.stringValue ?? "?"
            let ago = row["lastHeartbeatSecondsAgo"]?.numberValue
            let live = row["live"]?.boolValue ?? false
            let subscribed = row["subscribed"]?.arrayValue?.compactMap(\.stringValue) ?? []
            let launchable = row["launchable"]?.arrayValue?.compactMap(\.stringValue) ?? []
            rows.append([
                name == host ? "\(name) (this host)" : name,
                (ago.map { duration($0) + " ago" } ?? "-") + (live ? "" : ", GONE"),
                row["claimed"]?.integerValue.map(grouped) ?? "-",
                subscribed.isEmpty ? "-" : listed(subscribed, shown: 3),
                launchable.isEmpty ? "-" : listed(launchable, shown: 2),
                (row["registryAgrees"]?.boolValue ?? true) ? "same" : "DIFFERS",
                row["version"]?.stringValue ?? "-",
            ])
        }
        lines += table(rows).map { "  " + $0 }
        // Owed to a handler subscribed on no live host: who launches it, or why nobody can.
        for (handler, reason) in (fleet["waiting"]?.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
            lines.append("  \(handler): \(reason.stringValue ?? "waiting")")
        }
        return lines
    }

    static func listed(_ names: [String], shown: Int) -> String {
        guard names.count > shown else { return names.joined(separator: ", ") }
        return names.prefix(shown).joined(separator: ", ") + ", … (\(grouped(Int64(names.count - shown))) more)"
    }

    /// `scan  [#########.......] 5,120/10,000  2,300/s  ETA 2s`; nil without `done` and `total`.
    static func progressLine(_ progress: [String: JSONValue], width: Int = 16) -> String? {
        guard let done = progress["done"]?.integerValue, let total = progress["total"]?.integerValue, total > 0 else { return nil }
        var phase = progress["phase"]?.stringValue ?? "work"
        if let handler = progress["handler"]?.stringValue { phase += " " + handler }
        let filled = Int(min(Int64(width), max(0, done * Int64(width) / total)))
        let bar = "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "]"
        var parts = [phase, bar + " " + grouped(done) + "/" + grouped(total)]
        if let rate = progress["ratePerSecond"]?.numberValue { parts.append(grouped(Int64(rate.rounded())) + "/s") }
        if let eta = progress["etaSeconds"]?.numberValue { parts.append("ETA " + duration(eta)) }
        return parts.joined(separator: "  ")
    }

    /// `2s`, `3m 20s`, `1h 05m`.
    static func duration(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded(.up))
        if whole < 60 { return "\(whole)s" }
        if whole < 3600 { return "\(whole / 60)m \(whole % 60)s" }
        let minutes = (whole % 3600) / 60
        return "\(whole / 3600)h " + (minutes < 10 ? "0" : "") + "\(minutes)m"
    }

    /// `3.8 MiB`, `512 B`, `2.0 GiB`.
    static func bytes(_ value: Int64) -> String {
        let units = ["KiB", "MiB", "GiB", "TiB"]
        guard value >= 1024 else { return "\(value) B" }
        var amount = Double(value) / 1024
        var unit = 0
        while amount >= 1024 && unit < units.count - 1 {
            amount /= 1024
            unit += 1
        }
        return "\((amount * 10).rounded() / 10) \(units[unit])"
    }

    /// `10000` as `10,000`.
    static func grouped(_ value: Int64) -> String {
        let digits = String(value.magnitude)
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { result.append(",") }
            result.append(digit)
        }
        return (value < 0 ? "-" : "") + result
    }

    static func clipped(_ text: String, to length: Int) -> String {
        let line = text.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? text
        return line.count <= length ? line : String(line.prefix(length - 1)) + "…"
    }

    /// Rows with aligned columns; the last column is not padded.
    static func table(_ rows: [[String]]) -> [String] {
        guard let count = rows.map(\.count).max() else { return [] }
        var widths = Array(repeating: 0, count: count)
        for row in rows { for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) } }
        return rows.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }
    }
}

extension JSONValue {
    var integerValue: Int64? {
        switch self {
        case .integer(let value): value
        case .real(let value) where value.rounded() == value && abs(value) < 9e15: Int64(value)
        default: nil
        }
    }

    var numberValue: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .real(let value): value
        default: nil
        }
    }

    var arrayValue: [JSONValue]? {
        if case .array(let value) = self { value } else { nil }
    }

    var boolValue: Bool? {
        if case .bool(let value) = self { value } else { nil }
    }
}
