import DocRouteTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A host cut off from the fleet's database by a real network partition, longer than a lease, and
/// then joined again: three real docrouted hosts and a real PostgreSQL, host B in a network
/// namespace of its own reaching the database over a veth pair whose end is taken down.
@Suite(.serialized) struct FleetPartitionIntegrationTests {
    static let password = "fleet-pass-9Rk"
    static let molecules = "com.sunsetlakesoftware.molecules"
    static let leaseSeconds = 3

    /// What a host logs when it cannot reach PostgreSQL, each with what it logs once it can again.
    static let recoveries = [
        ("did not answer within lease_seconds", "fleet: PostgreSQL reached again"),
        ("fleet: no PostgreSQL answers at", "fleet: PostgreSQL reached again"),
        ("fleet: deliveries cannot be claimed", "fleet: deliveries are claimed again"),
        ("fleet: acknowledgements cannot be recorded", "fleet: acknowledgements recorded again"),
        ("fleet: listening for deliveries stopped", "fleet: listening for deliveries again"),
        ("fleet: cannot listen for deliveries", "fleet: listening for deliveries again"),
    ]

    /// A host of the fleet reaching the database at `database`: `[fleet]` with `host_name` and a
    /// short lease.
    func host(_ name: String, database: String) throws -> DaemonHarness {
        try .fleetHost(name, database: database, password: Self.password, leaseSeconds: Self.leaseSeconds)
    }

    static func document(_ index: Int) -> [UInt8] { FleetDeliveryIntegrationTests.document(index) }

    /// The ids of the deliveries a query selects, lowercased.
    static func ids(_ server: PostgresServer, where condition: String) -> Set<String> {
        let text = (try? server.psql("SELECT id FROM deliveries WHERE \(condition)", database: "fleet")) ?? ""
        return Set(text.split(separator: "\n").map { $0.lowercased() })
    }

    /// When each delivery `host` holds has its lease end, as the database says, by lowercased id.
    static func leaseEnds(_ server: PostgresServer, of host: String) -> [String: Date] {
        let text = (try? server.psql("SELECT id || ' ' || extract(epoch FROM lease_until) FROM deliveries WHERE state = 'claimed' AND claimed_by = '\(host)'", database: "fleet")) ?? ""
        var ends: [String: Date] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count == 2, let seconds = Double(fields[1]) { ends[fields[0].lowercased()] = Date(timeIntervalSince1970: seconds) }
        }
        return ends
    }

    /// A count from `sql` on the fleet database; -1 when it cannot be read.
    static func count(_ server: PostgresServer, _ sql: String) -> Int {
        (try? server.psql(sql, database: "fleet")).flatMap { Int($0) } ?? -1
    }

    /// Whether PostgreSQL answers from inside `namespace` (pg_isready run there, 2 s at most).
    static func reachable(from namespace: NetworkNamespace, server: PostgresServer) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: namespace.exec[0])
        process.arguments = Array(namespace.exec.dropFirst())
            + [PostgresServer.binaries + "/pg_isready", "-h", namespace.outerAddress, "-p", "\(server.port)", "-t", "2"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationReason == .exit && process.terminationStatus == 0
    }

    /// The network namespace a process is in (`/proc/PID/ns/net`'s link).
    static func networkNamespace(of pid: pid_t) -> String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/ns/net")
    }

    /// Names of the files under `folder` (relative to it), hidden names and folders left out.
    static func files(under folder: String) -> [String] {
        var found: [String] = []
        if let walker = FileManager.default.enumerator(atPath: folder) {
            while let entry = walker.nextObject() as? String {
                var info = stat()
                if lstat(folder + "/" + entry, &info) == 0, (info.st_mode & S_IFMT) != S_IFDIR { found.append(entry) }
            }
        }
        return found.sorted()
    }

    @Test(.enabled(if: getuid() == 0, "a network partition is made with ip netns and veth pairs, which needs root"))
    func aHostPartitionedFromTheDatabaseLongerThanALeaseLosesNothingAndDoublesNothing() throws {
        // The namespace first: PostgreSQL listens on its veth's address, so it must exist before.
        let namespace = try NetworkNamespace()
        defer {
            namespace.remove()
            #expect(!namespace.exists, "the network namespace \(namespace.name) was not removed")
        }
        let server = try PostgresServer(listenAddresses: [namespace.outerAddress], clientNetworks: [namespace.network])
        defer { server.stop() }
        try server.createRoleAndDatabase(role: "docroute", password: Self.password, database: "fleet")

        let intake = try host("host-a", database: server.url(user: "docroute", database: "fleet"))
        defer { intake.remove() }
        let partitioned = try host("host-b", database: server.url(user: "docroute", database: "fleet", host: namespace.outerAddress))
        defer { partitioned.remove() }
        let taking = try host("host-c", database: server.url(user: "docroute", database: "fleet"))
        defer { taking.remove() }
        try intake.start()
        defer { intake.stop() }
        try partitioned.start(shell: namespace.exec)
        defer { partitioned.stop() }
        try taking.start()
        defer { taking.stop() }
        func logs() -> String {
            "A:\n\(intake.daemonLog.suffix(2500))\nB:\n\(partitioned.daemonLog.suffix(4000))\nC:\n\(taking.daemonLog.suffix(2500))"
        }

        // Host B runs in the namespace, and reaches PostgreSQL only over the veth pair.
        let own = Self.networkNamespace(of: getpid())
        let bs = partitioned.daemonProcessID.flatMap(Self.networkNamespace(of:))
        #expect(bs != nil && bs != own, "host B's docrouted is not in a network namespace of its own (\(bs ?? "?") against \(own ?? "?"))")
        #expect(Self.reachable(from: namespace, server: server), "PostgreSQL does not answer at \(namespace.outerAddress) from the namespace")
        let registered = intake.waitUntil(timeout: 45) {
            (try? server.psql("SELECT string_agg(name, ',' ORDER BY name) FROM hosts", database: "fleet")) == "host-a,host-b,host-c"
        }
        try #require(registered, "\(logs())")

        // The handler on host B only: it gets documents and does not acknowledge them (yet).
        let onB = FleetHostHandler(socket: partitioned.socket, bundleIdentifier: Self.molecules, host: "B", holding: true)
        onB.start()
        defer { onB.stop() }
        try #require(intake.waitUntil(timeout: 15) { onB.subscriptionCount > 0 }, "the handler did not subscribe on host B")

        var drops: [(name: String, bytes: [UInt8])] = []
        let count = 12
        for index in 0..<count {
            let name = "partition-\(index).pdb"
            let bytes = Self.document(index)
            drops.append((name, bytes))
            try intake.drop(name, bytes)
        }
        #expect(intake.waitForInboxDrained(timeout: 30), "host A's inbox still holds files: \(Self.files(under: intake.inbox))")
        // What B holds: delivered to its handler, claimed by it in the database, and no longer growing.
        var heldByB: Set<String> = []
        let settled = intake.waitUntil(timeout: 30) {
            let received = Set(onB.received.map { $0.deliveryID.lowercased() })
            guard !received.isEmpty, received == Self.ids(server, where: "claimed_by = 'host-b' AND state = 'claimed'") else { return false }
            usleep(1_500_000)
            let again = Set(onB.received.map { $0.deliveryID.lowercased() })
            guard again == received, again == Self.ids(server, where: "claimed_by = 'host-b' AND state = 'claimed'") else { return false }
            heldByB = received
            return true
        }
        try #require(settled, "\(onB.summary)\n\(logs())")
        #expect(onB.acknowledged.isEmpty)

        // The partition: B's end of its link goes down; its docrouted keeps running.
        try namespace.partition()
        let partitionedAt = Date()
        #expect(!namespace.isLinkUp, "host B's veth is still up")
        #expect(!Self.reachable(from: namespace, server: server), "PostgreSQL still answers host B through the partition")
        // B cannot renew from now on: the leases it holds end when the database says.
        let leaseEnds = Self.leaseEnds(server, of: "host-b")
        #expect(Set(leaseEnds.keys) == heldByB, "B's leases at the partition: \(leaseEnds)")

        // The handler is subscribed on host C too, and acknowledges everything: it gets every
        // document, those B holds once B's leases ran out, under the ids B was given.
        let onC = FleetHostHandler(socket: taking.socket, bundleIdentifier: Self.molecules, host: "C")
        onC.start()
        defer { onC.stop() }
        let allAcknowledged = taking.waitUntil(timeout: 60) {
            Set(onC.acknowledged.map { $0.lowercased() }).count == count
                && Self.count(server, "SELECT count(*) FROM deliveries WHERE state = 'acknowledged'") == count
        }
        let states = (try? server.psql("SELECT state || ' ' || coalesce(claimed_by, '-') || ' ' || count(*) FROM deliveries GROUP BY 1 ORDER BY 1", database: "fleet")) ?? "?"
        try #require(allAcknowledged, "deliveries: \(states)\n\(onB.summary)\n\(onC.summary)\n\(logs())")
        let toldC = Set(onC.received.map { $0.deliveryID.lowercased() })
        #expect(heldByB.isSubset(of: toldC), "host C was not told the ids B was given: \(heldByB.subtracting(toldC).sorted())")
        #expect(Self.ids(server, where: "claimed_by = 'host-c'") == toldC, "deliveries: \(states)")
        // None of B's was taken while its lease ran (the server's clock is this machine's).
        let arrivalsOnC = Dictionary(onC.arrivals.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: min)
        for (id, end) in leaseEnds {
            #expect((arrivalsOnC[id] ?? .distantPast) >= end, "host C was sent \(id) at \(arrivalsOnC[id] ?? .distantPast), before B's lease ended at \(end)")
        }
        let claimedAgain = Self.ids(server, where: "attempts >= 2 AND claimed_by = 'host-c'")
        #expect(heldByB.isSubset(of: claimedAgain),
                "B's deliveries were not claimed again by C: \((try? server.psql("SELECT id, claimed_by, attempts FROM deliveries", database: "fleet")) ?? "?")")

        // Longer than a lease: B notices by itself that PostgreSQL does not answer, and keeps running.
        let noticed = partitioned.waitUntil(timeout: 30) {
            Date().timeIntervalSince(partitionedAt) > Double(2 * Self.leaseSeconds) && partitioned.daemonLog.contains("did not answer within lease_seconds")
        }
        #expect(noticed, "host B's log does not say PostgreSQL stopped answering:\n\(partitioned.daemonLog.suffix(3000))")
        #expect(partitioned.isRunning, "host B's docrouted ended during the partition:\n\(partitioned.daemonLog.suffix(3000))")
        #expect(!namespace.isLinkUp)
        #expect(onB.acknowledged.isEmpty)

        // Healed: B reaches PostgreSQL again by itself, and its handler now acknowledges what it got.
        let logBeforeHeal = partitioned.daemonLog.utf8.count
        try namespace.heal()
        #expect(namespace.isLinkUp, "host B's veth did not come up")
        #expect(partitioned.waitUntil(timeout: 20) { Self.reachable(from: namespace, server: server) }, "PostgreSQL does not answer host B after the heal")
        let rejoined = partitioned.waitUntil(timeout: 60) {
            String(decoding: partitioned.daemonLog.utf8.dropFirst(logBeforeHeal), as: UTF8.self).contains("fleet: PostgreSQL reached again")
        }
        #expect(rejoined, "host B's log does not say it reached PostgreSQL again:\n\(partitioned.daemonLog.suffix(5000))")
        #expect(partitioned.waitUntil(timeout: 15) {
            Self.count(server, "SELECT count(*) FROM hosts WHERE name = 'host-b' AND last_heartbeat > now() - interval '3 seconds'") == 1
        }, "host B beats no more: \((try? server.psql("SELECT name, last_heartbeat, now() FROM hosts", database: "fleet")) ?? "?")")
        onB.release()
        #expect(partitioned.waitUntil(timeout: 30) { onB.held.isEmpty && Set(onB.acknowledged.map { $0.lowercased() }) == heldByB },
                "\(onB.summary)\n\(logs())")

        // B delivers again: with C's handler gone, new documents reach B's handler through the database.
        onC.stop()
        let more = 3
        for index in count..<(count + more) {
            let name = "after-heal-\(index).pdb"
            let bytes = Self.document(index)
            drops.append((name, bytes))
            try intake.drop(name, bytes)
        }
        let total = count + more
        let laterOnB = partitioned.waitUntil(timeout: 60) {
            Self.count(server, "SELECT count(*) FROM deliveries WHERE state = 'acknowledged'") == total
                && Set(onB.acknowledged.map { $0.lowercased() }).count == heldByB.count + more
        }
        let laterStates = (try? server.psql("SELECT state || ' ' || coalesce(claimed_by, '-') || ' ' || count(*) FROM deliveries GROUP BY 1 ORDER BY 1", database: "fleet")) ?? "?"
        #expect(laterOnB, "deliveries: \(laterStates)\n\(onB.summary)\n\(logs())")
        #expect(intake.waitForInboxDrained(timeout: 30))

        // Whatever failed on B during the partition, B said afterwards that it works again.
        let logOfB = partitioned.daemonLog
        for (failure, recovery) in Self.recoveries {
            guard let failed = logOfB.range(of: failure, options: .backwards) else { continue }
            #expect(logOfB[failed.upperBound...].contains(recovery), "host B logged \"\(failure)\" and never \"\(recovery)\" after it:\n\(logOfB.suffix(4000))")
        }

        // The database: one delivery per document, every one acknowledged, no other.
        #expect(Self.count(server, "SELECT count(*) FROM deliveries") == total)
        #expect(Self.count(server, "SELECT count(DISTINCT document_id) FROM deliveries") == total)
        #expect(Self.count(server, "SELECT count(*) FROM deliveries WHERE state <> 'acknowledged' OR acknowledged_at IS NULL") == 0, "deliveries: \(laterStates)")
        #expect(Self.count(server, "SELECT count(*) FROM document_chunks") == 0, "the bytes of acknowledged documents are still in the database")

        // The history of both hosts' handler instances, checked.
        onB.stop()
        var history = DeliveryHistory()
        for drop in drops { history.dropped(drop.name, bytes: drop.bytes) }
        onB.record(into: &history)
        onC.record(into: &history)
        onB.noteSandbox(partitioned.sandbox(Self.molecules), into: &history)
        onC.noteSandbox(taking.sandbox(Self.molecules), into: &history)
        history.leftInInbox = Self.files(under: intake.inbox)
        for (name, harness) in [("A", intake), ("B", partitioned), ("C", taking)] {
            for file in Self.files(under: harness.quarantine) where !file.hasSuffix(".reason") { history.quarantined["\(name): \(file)"] = "quarantined" }
        }
        let problems = history.violations()
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))\n\(history.summary)")
        let announced = Set(history.announcements.map { $0.deliveryID.lowercased() })
        #expect(announced == Self.ids(server, where: "true"), "the ids announced are not the database's")
        // Each of B's held documents lies once in B's sandbox and once in C's, under the same id.
        let announcedOnB = Set(history.announcements.filter { $0.host == "B" }.map { $0.deliveryID.lowercased() })
        #expect(announcedOnB == heldByB.union(Self.ids(server, where: "claimed_by = 'host-b'")))
        #expect(history.sandboxes["B"]?.count == heldByB.count + more, "\(history.sandboxes["B"]?.keys.sorted() ?? [])")
        #expect(history.sandboxes["C"]?.count == count, "\(history.sandboxes["C"]?.keys.sorted() ?? [])")
        #expect(Self.files(under: intake.sandbox(Self.molecules)).isEmpty, "host A copied documents itself")
        #expect(!partitioned.daemonLog.contains(Self.password))
    }
}
