import DocRouteTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The fleet under load and trouble, real docrouted hosts against a real PostgreSQL: two hosts
/// sharing one handler's burst, PostgreSQL stopped and started again mid-burst, a large document
/// in bounded memory, and two hosts migrating an empty database at the same moment. Each is
/// checked by ``DeliveryHistory`` (every host's handler, sandbox, inbox and quarantine) and by
/// what the database holds at the end.
///
/// `make chaos` runs the long forms: DOCROUTE_FLEET_BURST_FILES (10,000 files shared by two
/// hosts), DOCROUTE_FLEET_RESTART_FILES (files around the restart), DOCROUTE_FLEET_LARGE_MIB
/// (1024: a document of 1 GiB) and DOCROUTE_FLEET_START_RACES (empty databases raced for).
@Suite(.serialized) struct FleetScenarioIntegrationTests {
    static let molecules = FleetDeliveryIntegrationTests.molecules

    static func setting(_ name: String, default value: Int) -> Int {
        Int(ProcessInfo.processInfo.environment[name] ?? "") ?? value
    }

    static var burstFiles: Int { setting("DOCROUTE_FLEET_BURST_FILES", default: 300) }
    static var restartFiles: Int { setting("DOCROUTE_FLEET_RESTART_FILES", default: 240) }
    static var largeMiB: Int { setting("DOCROUTE_FLEET_LARGE_MIB", default: 64) }
    static var startRaces: Int { setting("DOCROUTE_FLEET_START_RACES", default: 3) }

    /// How far each daemon's peak resident memory may rise over its start-up peak while a large
    /// document passes: far less than the document (64 MiB, 1 GiB in the long form), so a daemon
    /// holding it whole, or a good part of it, fails. The debug build's start-up peak is itself
    /// 55 to 57 MiB, the release build's lower (docs/BENCHMARKS.md).
    static let residentGrowthLimitKiB = 16 * 1024

    /// Hosts of these names in `fleet`, started and registered, each with its name.
    static func startedHosts(_ names: [String], in fleet: FleetHarness, leaseSeconds: Int = 6) throws -> [(name: String, harness: DaemonHarness)] {
        zip(names, try fleet.startedHosts(names, leaseSeconds: leaseSeconds)).map { (name: $0, harness: $1) }
    }

    /// One line of SQL's answer, "?" when psql fails (for messages and polls).
    static func ask(_ server: PostgresServer, _ sql: String, database: String = "fleet") -> String {
        (try? server.psql(sql, database: database)) ?? "?"
    }

    /// Waits, polling every half second, until `condition` holds; false after `timeout` seconds.
    static func waitUntil(timeout: TimeInterval, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return true }
            usleep(500_000)
        }
        return condition()
    }

    /// Waits until `count` deliveries are acknowledged in the database.
    static func waitForAcknowledged(_ count: Int, server: PostgresServer, timeout: TimeInterval, database: String = "fleet") -> Bool {
        waitUntil(timeout: timeout) {
            ask(server, "SELECT count(*) FROM deliveries WHERE state = 'acknowledged' AND acknowledged_at IS NOT NULL", database: database) == "\(count)"
        }
    }

    /// Starts a handler on each host named and waits until each has subscribed.
    static func handlers(on hosts: [(name: String, harness: DaemonHarness)]) -> [(name: String, harness: DaemonHarness, handler: HistoryHandler)] {
        let started = hosts.map { (name: $0.name, harness: $0.harness, handler: HistoryHandler(socket: $0.harness.socket, bundleIdentifier: molecules)) }
        for entry in started { entry.handler.start() }
        for entry in started {
            #expect(entry.harness.waitUntil(timeout: 15) { entry.handler.subscriptionCount > 0 }, "the handler did not subscribe on \(entry.name)")
        }
        return started
    }

    /// The whole fleet's history: the drops recorded in `drops`, then what each host's handler was
    /// told and acknowledged (its announcements marked with the host), and at the end every
    /// host's sandbox, inbox and quarantine. Stops the handlers.
    static func history(_ drops: DeliveryHistory, handlers: [(name: String, harness: DaemonHarness, handler: HistoryHandler)],
                        hosts: [(name: String, harness: DaemonHarness)]) -> DeliveryHistory {
        var history = drops
        for entry in handlers {
            let seen = entry.handler.stop()
            for announcement in seen.announcements {
                var marked = announcement
                marked.host = entry.name
                history.announced(marked)
            }
            for ack in seen.acks { history.acknowledged(ack) }
            for other in seen.otherMessages { history.noted("\(entry.name): \(other)") }
        }
        for (name, harness) in hosts {
            var sandbox: [String: String] = [:]
            for file in FleetDeliveryIntegrationTests.files(in: harness.sandbox(molecules)) {
                sandbox[file] = DeliveryHistory.sha256(ofFileAt: harness.sandbox(molecules) + "/" + file) ?? "unreadable"
            }
            history.sandboxes[name] = sandbox
            history.leftInInbox += regularFiles(under: harness.inbox).map { "\(name): \($0)" }
            for file in regularFiles(under: harness.quarantine) where !file.hasSuffix(".reason") {
                let reason = (try? String(contentsOfFile: harness.quarantine + "/" + file + ".reason", encoding: .utf8)) ?? "no reason file"
                history.quarantined["\(name): \(file)"] = String(reason.prefix { $0 != "\n" })
            }
        }
        return history
    }

    /// Paths (relative to `folder`) of every file that is not a folder under it.
    static func regularFiles(under folder: String) -> [String] {
        var found: [String] = []
        guard let walker = FileManager.default.enumerator(atPath: folder) else { return [] }
        while let entry = walker.nextObject() as? String {
            var info = stat()
            if lstat(folder + "/" + entry, &info) == 0, (info.st_mode & S_IFMT) != S_IFDIR { found.append(entry) }
        }
        return found.sorted()
    }

    /// What the database says of `count` documents: each committed once with one delivery,
    /// acknowledged once (one history event), no chunk left behind. Empty when all holds.
    static func databaseProblems(_ server: PostgresServer, count: Int, database: String = "fleet") -> [String] {
        var problems: [String] = []
        let facts: [(String, String)] = [
            ("documents", "SELECT count(*) FROM documents"),
            ("distinct document names", "SELECT count(DISTINCT name) FROM documents"),
            ("deliveries", "SELECT count(*) FROM deliveries"),
            ("documents with a delivery", "SELECT count(DISTINCT document_id) FROM deliveries"),
            ("acknowledged deliveries", "SELECT count(*) FROM deliveries WHERE state = 'acknowledged' AND handled"),
            ("acknowledgement events", "SELECT count(*) FROM history_events WHERE event = 'acknowledged'"),
            ("deliveries with an acknowledgement event", "SELECT count(DISTINCT delivery_id) FROM history_events WHERE event = 'acknowledged'"),
        ]
        for (what, sql) in facts {
            let answer = ask(server, sql, database: database)
            if answer != "\(count)" { problems.append("\(what): \(answer), not \(count)") }
        }
        let chunks = ask(server, "SELECT count(*) FROM document_chunks", database: database)
        if chunks != "0" { problems.append("\(chunks) chunks left after every delivery was acknowledged") }
        return problems
    }

    /// A peak resident size (`VmHWM`) from /proc, in KiB; nil when the process is gone.
    static func peakResidentKiB(_ pid: pid_t?) -> Int? {
        guard let pid, let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return nil }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
    }

    // MARK: Two hosts share a burst

    @Test func twoHandlerHostsShareABurstAndEachDocumentIsDeliveredOnce() throws {
        let count = Self.burstFiles
        let fleet = try FleetHarness()
        defer { fleet.tearDown() }
        let server = fleet.server
        let hosts = try Self.startedHosts(["host-a", "host-b", "host-c"], in: fleet)
        let (intake, second, third) = (hosts[0].harness, hosts[1].harness, hosts[2].harness)

        let handlers = Self.handlers(on: [hosts[1], hosts[2]])
        defer { for entry in handlers { _ = entry.handler.stop() } }
        var drops = DeliveryHistory()
        for index in 0..<count {
            let name = "burst-\(index).pdb"
            let bytes = FleetDeliveryIntegrationTests.document(index)
            drops.dropped(name, bytes: bytes)
            try intake.drop(name, bytes)
        }
        let timeout = 60 + Double(count) / 5
        let acknowledged = Self.waitForAcknowledged(count, server: server, timeout: timeout)
        #expect(acknowledged, """
            \(Self.ask(server, "SELECT state || ' ' || count(*) FROM deliveries GROUP BY state ORDER BY state"))
            B:\n\(second.daemonLog.suffix(2000))\nC:\n\(third.daemonLog.suffix(2000))
            """)
        #expect(intake.waitForInboxDrained(timeout: 30), "host A's inbox still holds files")

        let history = Self.history(drops, handlers: handlers, hosts: hosts)
        let problems = history.violations()
        #expect(problems.isEmpty, "\(problems.prefix(20).joined(separator: "\n"))\n\(history.summary)")
        let databaseProblems = Self.databaseProblems(server, count: count)
        #expect(databaseProblems.isEmpty, "\(databaseProblems)")
        let announcedIDs = Set(history.announcements.map { $0.deliveryID.lowercased() })
        let ids = Set(try server.psql("SELECT id FROM deliveries", database: "fleet").split(separator: "\n").map { $0.lowercased() })
        #expect(announcedIDs == ids, "announced ids are not the database's")

        // Both hosts were busy: each handler instance took a substantial share, and the database
        // says the same hosts claimed them.
        let shares = Dictionary(grouping: history.announcements, by: \.host).mapValues { Set($0.map(\.deliveryID)).count }
        let claimed = Self.ask(server, "SELECT claimed_by || ' ' || count(*) FROM deliveries GROUP BY claimed_by ORDER BY claimed_by")
        for name in ["host-b", "host-c"] {
            let share = shares[name] ?? 0
            #expect(share * 10 > count, "\(name) delivered \(share) of \(count): \(shares); claimed in the database: \(claimed)")
        }
        #expect(!claimed.contains("host-a"), "the intake host, with no handler subscribed, claimed deliveries: \(claimed)")
        #expect(FleetDeliveryIntegrationTests.files(in: intake.sandbox(Self.molecules)).isEmpty)
    }

    // MARK: PostgreSQL stopped and started again mid-burst

    /// Stopped cleanly, and as a crash would stop it (no checkpoint; claims and history events,
    /// committed without waiting for the disk, may be lost and are made again).
    @Test(arguments: ["fast", "immediate"])
    func postgreSQLStoppedMidBurstLosesAndDoublesNothing(stop: String) throws {
        let count = Self.restartFiles
        let fleet = try FleetHarness()
        defer { fleet.tearDown() }
        let server = fleet.server
        let hosts = try Self.startedHosts(["host-a", "host-b"], in: fleet)
        let (intake, delivering) = (hosts[0].harness, hosts[1].harness)
        let handlers = Self.handlers(on: [hosts[1]])
        defer { for entry in handlers { _ = entry.handler.stop() } }

        var drops = DeliveryHistory()
        func drop(_ range: Range<Int>) throws {
            for index in range {
                let name = "restart-\(index).pdb"
                let bytes = FleetDeliveryIntegrationTests.document(index)
                drops.dropped(name, bytes: bytes)
                try intake.drop(name, bytes)
            }
        }
        // A first third; once deliveries are being claimed (intake still committing the rest),
        // the server stops: commits, claims, copies and acknowledgements are cut off mid-way.
        let third = count / 3
        try drop(0..<third)
        let claiming = intake.waitUntil(timeout: 30) { handlers[0].handler.snapshot.announcements.count > 0 }
        #expect(claiming, "nothing was delivered before the stop:\n\(delivering.daemonLog.suffix(2000))")
        try server.pause(crash: stop == "immediate")
        // A second third while it is away: these wait in A's inbox.
        try drop(third..<2 * third)
        #expect(intake.waitUntil(timeout: 15) { intake.daemonLog.contains("they stay in their inboxes") }, "\(intake.daemonLog.suffix(3000))")
        usleep(4_000_000)
        try server.start()
        try drop(2 * third..<count)

        let acknowledged = Self.waitForAcknowledged(count, server: server, timeout: 150 + Double(count) / 5)
        #expect(acknowledged, """
            \(Self.ask(server, "SELECT state || ' ' || count(*) FROM deliveries GROUP BY state ORDER BY state"))
            A:\n\(intake.daemonLog.suffix(3000))\nB:\n\(delivering.daemonLog.suffix(3000))
            """)
        #expect(intake.waitForInboxDrained(timeout: 60), "host A's inbox still holds files:\n\(intake.daemonLog.suffix(3000))")

        let history = Self.history(drops, handlers: handlers, hosts: hosts)
        let problems = history.violations()
        #expect(problems.isEmpty, "\(problems.prefix(20).joined(separator: "\n"))\n\(history.summary)")
        let databaseProblems = Self.databaseProblems(server, count: count)
        #expect(databaseProblems.isEmpty, "\(databaseProblems)")
        let ids = Set(try server.psql("SELECT id FROM deliveries", database: "fleet").split(separator: "\n").map { $0.lowercased() })
        #expect(Set(history.announcements.map { $0.deliveryID.lowercased() }) == ids, "announced ids are not the database's")
        // Host A said it waited for the database, and that it went on.
        let log = intake.daemonLog
        #expect(log.contains("documents cannot be committed to PostgreSQL"), "\(log.suffix(3000))")
        #expect(log.contains("PostgreSQL takes documents again"), "\(log.suffix(3000))")
    }

    // MARK: A large document in bounded memory

    /// Writes a `.pdb` of `size` bytes at `path` without holding it: a molecule's first lines, then
    /// one pseudo-random MiB repeated with each MiB's number in its first bytes (so a chunk out of
    /// place changes the digest), the last MiB cut short.
    static func writeLargeDocument(_ path: String, size: Int64) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw HarnessError("create \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var random = SplitMix(seed: 0x5eed_f1ee7)
        var block = [UInt8](repeating: 0, count: 1 << 20)
        block.withUnsafeMutableBytes { bytes in
            let words = bytes.bindMemory(to: UInt64.self)
            for index in words.indices { words[index] = random.next() }
        }
        let header = Array("HEADER    LARGE PROTEIN\n".utf8)
        var offset: Int64 = 0
        var index: UInt64 = 0
        while offset < size {
            let length = Int(min(Int64(block.count), size - offset))
            withUnsafeBytes(of: index.bigEndian) { number in
                for position in 0..<8 { block[header.count + position] = number[position] }
            }
            if index == 0 { block.replaceSubrange(0..<header.count, with: header) }
            let written = block.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, length, off_t(offset)) }
            guard written == length else { throw HarnessError("write \(path): \(String(cString: strerror(errno)))") }
            offset += Int64(length)
            index += 1
        }
        guard fsync(descriptor) == 0 else { throw HarnessError("sync \(path): \(String(cString: strerror(errno)))") }
    }

    @Test func aLargeDocumentCrossesTheFleetInBoundedMemory() throws {
        let size = Int64(Self.largeMiB) << 20 + 12_345
        let fleet = try FleetHarness()
        defer { fleet.tearDown() }
        let server = fleet.server
        // A long lease: a slow 1 GiB copy on a busy machine is not taken for a dead host.
        let hosts = try Self.startedHosts(["host-a", "host-b"], in: fleet, leaseSeconds: 30)
        let (intake, delivering) = (hosts[0].harness, hosts[1].harness)
        let handlers = Self.handlers(on: [hosts[1]])
        defer { for entry in handlers { _ = entry.handler.stop() } }
        let before = (intake: Self.peakResidentKiB(intake.daemonProcessID), delivering: Self.peakResidentKiB(delivering.daemonProcessID))

        // Written under a hidden name in the inbox, then renamed: intake sees it whole.
        let temporary = intake.inbox + "/.incoming-large"
        try Self.writeLargeDocument(temporary, size: size)
        let digest = try #require(DeliveryHistory.sha256(ofFileAt: temporary))
        var drops = DeliveryHistory()
        drops.dropped("large.pdb", sha256: digest)
        #expect(rename(temporary, intake.inbox + "/large.pdb") == 0)

        let timeout = 120 + Double(Self.largeMiB) / 2
        let acknowledged = Self.waitForAcknowledged(1, server: server, timeout: timeout)
        #expect(acknowledged, """
            \(Self.ask(server, "SELECT state || ' ' || count(*) FROM deliveries GROUP BY state ORDER BY state"))
            A:\n\(intake.daemonLog.suffix(3000))\nB:\n\(delivering.daemonLog.suffix(3000))
            """)
        #expect(intake.waitForInboxDrained(timeout: 30), "host A's inbox still holds the document")
        // Read before the daemons stop: their peaks over the whole crossing.
        let peakIntake = Self.peakResidentKiB(intake.daemonProcessID)
        let peakDelivering = Self.peakResidentKiB(delivering.daemonProcessID)

        let history = Self.history(drops, handlers: handlers, hosts: hosts)
        let problems = history.violations()
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))\n\(history.summary)")
        let copies = FleetDeliveryIntegrationTests.files(in: delivering.sandbox(Self.molecules))
        #expect(copies.count == 1, "\(copies)")
        if let copy = copies.first {
            let path = delivering.sandbox(Self.molecules) + "/" + copy
            var status = stat()
            #expect(stat(path, &status) == 0 && Int64(status.st_size) == size, "the copy has \(status.st_size) bytes, the document \(size)")
            #expect(DeliveryHistory.sha256(ofFileAt: path) == digest, "the copy's bytes are not the document's")
        }
        #expect(Self.databaseProblems(server, count: 1).isEmpty, "\(Self.databaseProblems(server, count: 1))")
        let figures = "host A \(before.intake ?? -1) KiB after start, \(peakIntake ?? -1) KiB at the end; host B \(before.delivering ?? -1) KiB, \(peakDelivering ?? -1) KiB"
        #expect((peakIntake ?? .max) - (before.intake ?? 0) < Self.residentGrowthLimitKiB, "\(figures)")
        #expect((peakDelivering ?? .max) - (before.delivering ?? 0) < Self.residentGrowthLimitKiB, "\(figures)")
    }

    // MARK: Two hosts migrate an empty database at once

    @Test func twoHostsStartingOnAnEmptyDatabaseMigrateItOnce() throws {
        let fleet = try FleetHarness()
        defer { fleet.tearDown() }
        for round in 0..<Self.startRaces {
            let database = "race\(round)"
            try fleet.server.psql("CREATE DATABASE \(database) OWNER docroute")
            try raceToMigrate(fleet: fleet, database: database, round: round)
        }
    }

    /// One round: hosts A and B started on the same instant against `database`, empty.
    func raceToMigrate(fleet: FleetHarness, database: String, round: Int) throws {
        let server = fleet.server
        let first = try fleet.host("host-a", leaseSeconds: 6, database: fleet.url(database: database))
        let second = try fleet.host("host-b", leaseSeconds: 6, database: fleet.url(database: database))
        let hosts = [(name: "host-a", harness: first), (name: "host-b", harness: second)]
        let lock = NSLock()
        nonisolated(unsafe) var failures: [String] = []
        DispatchQueue.concurrentPerform(iterations: hosts.count) { index in
            do {
                try hosts[index].harness.start()
            } catch {
                lock.withLock { failures.append("\(hosts[index].name): \(error)") }
            }
        }
        defer { for (_, harness) in hosts { harness.stop() } }
        try #require(failures.isEmpty, "\(failures)")
        #expect(fleet.waitForHosts(hosts.map(\.name), database: database),
                "round \(round):\nA:\n\(first.daemonLog.suffix(2000))\nB:\n\(second.daemonLog.suffix(2000))")

        let versions = Self.ask(server, "SELECT version || ':' || count(*) FROM docroute_schema_migrations GROUP BY version ORDER BY version", database: database)
        #expect(versions == "1:1\n2:1\n3:1\n4:1", "round \(round): migration rows per version: \(versions)")
        let appliedBy = Self.ask(server, "SELECT count(DISTINCT applied_by) FROM docroute_schema_migrations", database: database)
        #expect(appliedBy == "1", "round \(round): versions applied by \(appliedBy) hosts")
        let migrated = hosts.filter { $0.harness.daemonLog.contains("fleet: schema migrated") }.map(\.name)
        #expect(migrated.count == 1, "round \(round): hosts that say they migrated: \(migrated)")

        // A document dropped on either host is delivered (the handler is subscribed on both).
        let handlers = Self.handlers(on: hosts)
        defer { for entry in handlers { _ = entry.handler.stop() } }
        var drops = DeliveryHistory()
        for (index, entry) in hosts.enumerated() {
            let name = "race-\(round)-\(entry.name).pdb"
            let bytes = FleetDeliveryIntegrationTests.document(index)
            drops.dropped(name, bytes: bytes)
            try entry.harness.drop(name, bytes)
        }
        let acknowledged = Self.waitForAcknowledged(hosts.count, server: server, timeout: 60, database: database)
        #expect(acknowledged, "round \(round): \(Self.ask(server, "SELECT state || ' ' || count(*) FROM deliveries GROUP BY state", database: database))")
        #expect(hosts.allSatisfy { $0.harness.waitForInboxDrained(timeout: 30) })
        let history = Self.history(drops, handlers: handlers, hosts: hosts)
        let problems = history.violations()
        #expect(problems.isEmpty, "round \(round): \(problems.joined(separator: "\n"))\n\(history.summary)")
        let databaseProblems = Self.databaseProblems(server, count: hosts.count, database: database)
        #expect(databaseProblems.isEmpty, "round \(round): \(databaseProblems)")
    }
}
