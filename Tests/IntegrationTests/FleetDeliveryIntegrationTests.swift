import DocRouteTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Real docrouted hosts in one fleet, against a real PostgreSQL: a file dropped on one host is
/// delivered on the host where its handler is subscribed, acknowledged there and in the database,
/// and its source leaves the inbox it was dropped in.
@Suite(.serialized) struct FleetDeliveryIntegrationTests {
    static let password = FleetHarness.password
    static let molecules = "com.sunsetlakesoftware.molecules"

    /// A molecule file of its own for each `index`: the same type, different bytes.
    static func document(_ index: Int) -> [UInt8] {
        Array("HEADER    PROTEIN \(index)\nREMARK   \(UUID().uuidString)\nATOM      1  N   ALA A   1      11.104   6.134  -6.504  1.00  0.00           N\nEND\n".utf8)
    }

    /// The real files of a sandbox folder (hidden temporaries left out).
    static func files(in folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
    }

    /// The real files of a sandbox folder with the SHA-256 of each.
    static func digests(in folder: String) -> [String: String] {
        Dictionary(uniqueKeysWithValues: files(in: folder).map { ($0, DeliveryHistory.sha256(ofFileAt: folder + "/" + $0) ?? "unreadable") })
    }

    @Test func aFileDroppedOnOneHostIsDeliveredWhereItsHandlerIsSubscribed() throws {
        let fleet = try FleetHarness()
        defer { fleet.tearDown() }
        let server = fleet.server
        let hosts = try fleet.startedHosts(["host-a", "host-b"], leaseSeconds: 6)
        let (intake, delivering) = (hosts[0], hosts[1])

        // The handler is subscribed on host B only.
        let handler = fleet.subscribedHandler(on: delivering)

        for index in 0..<20 {
            let name = "molecule-\(index).pdb"
            let bytes = Self.document(index)
            handler.dropped(name, bytes: bytes)
            try intake.drop(name, bytes)
        }
        let acknowledged = intake.waitUntil(timeout: 90) { handler.everyDropAcknowledged }
        #expect(acknowledged, "\(handler.snapshot.summary)\nA:\n\(intake.daemonLog.suffix(3000))\nB:\n\(delivering.daemonLog.suffix(3000))")
        #expect(intake.waitForInboxDrained(timeout: 30), "host A's inbox still holds files")

        // The database has every delivery acknowledged, under the ids the handler was told.
        let recorded = intake.waitUntil(timeout: 30) {
            (try? server.psql("SELECT count(*) FROM deliveries WHERE acknowledged_at IS NOT NULL", database: "fleet")) == "20"
        }
        let states = (try? server.psql("SELECT state || ' ' || count(*) FROM deliveries GROUP BY state ORDER BY state", database: "fleet")) ?? "?"
        #expect(recorded, "deliveries by state: \(states)")
        let ids = Set(try server.psql("SELECT id FROM deliveries ORDER BY id", database: "fleet").split(separator: "\n").map { $0.lowercased() })

        handler.noteEnd(sandbox: delivering.sandbox(Self.molecules), inbox: intake.inbox, quarantine: intake.quarantine)
        let history = handler.stop()
        let problems = history.violations()
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))\n\(history.summary)")
        #expect(history.announcements.allSatisfy { $0.type == "openURL" }, "\(history.announcements.map(\.type))")
        #expect(Set(history.announcements.map { $0.deliveryID.lowercased() }) == ids, "announced ids are not the database's")
        #expect(history.sandbox.count == 20, "\(history.sandbox.keys.sorted())")
        // Nothing was copied on the intake host, and nothing quarantined on either.
        #expect(Self.files(in: intake.sandbox(Self.molecules)).isEmpty, "\(Self.files(in: intake.sandbox(Self.molecules)))")
        #expect(Self.files(in: intake.quarantine).isEmpty && Self.files(in: delivering.quarantine).isEmpty)
        #expect(!intake.daemonLog.contains(Self.password) && !delivering.daemonLog.contains(Self.password))
    }

    @Test func deliveriesHeldByAHostThatDiesGoToAnotherAfterTheLease() throws {
        let fleet = try FleetHarness()
        defer { fleet.tearDown() }
        let server = fleet.server
        let hosts = try fleet.startedHosts(["host-a", "host-b", "host-c"], leaseSeconds: 3)
        let (intake, dying, taking) = (hosts[0], hosts[1], hosts[2])

        // On host B a handler that takes its documents and never acknowledges them.
        let silent = try LineClient(path: dying.socket, timeout: 5)
        defer { silent.close() }
        try silent.send(["type": "subscribe", "id": "silent", "bundleIdentifier": Self.molecules])
        #expect(silent.readMessage()?["type"] as? String == "subscribed")

        var documents: [String: [UInt8]] = [:]
        for index in 0..<3 {
            let name = "held-\(index).pdb"
            documents[name] = Self.document(index)
            try intake.drop(name, documents[name]!)
        }
        let copied = dying.waitUntil(timeout: 60) { Self.files(in: dying.sandbox(Self.molecules)).count == 3 }
        #expect(copied, "\(Self.files(in: dying.sandbox(Self.molecules)))\n\(dying.daemonLog.suffix(3000))")
        // What host B's handler was told, with what each named file held as it read the message.
        var told: [DeliveryHistory.Announcement] = []
        silent.setTimeout(2)
        while told.count < 3, let message = silent.readMessage() {
            guard message["type"] as? String == "openURL", let announcement = DeliveryHistory.Announcement(message: message, host: "host-b") else {
                continue
            }
            told.append(announcement)
        }
        #expect(told.count == 3, "host B's handler was told of \(told.count) documents")
        let sandboxB = Self.digests(in: dying.sandbox(Self.molecules))
        #expect(dying.waitUntil(timeout: 15) {
            (try? server.psql("SELECT count(*) FROM deliveries WHERE claimed_by = 'host-b' AND acknowledged_at IS NULL", database: "fleet")) == "3"
        }, "\((try? server.psql("SELECT state, claimed_by FROM deliveries", database: "fleet")) ?? "?")")
        dying.crash()

        // Host C's handler gets them once B's leases ran out, under the same delivery ids.
        let ids = Set(try server.psql("SELECT id FROM deliveries", database: "fleet").split(separator: "\n").map { $0.lowercased() })
        let handler = HistoryHandler(socket: taking.socket, bundleIdentifier: Self.molecules)
        for (name, bytes) in documents { handler.dropped(name, bytes: bytes) }
        handler.start()
        defer { _ = handler.stop() }
        let acknowledged = taking.waitUntil(timeout: 90) { handler.everyDropAcknowledged }
        #expect(acknowledged, "\(handler.snapshot.summary)\nC:\n\(taking.daemonLog.suffix(3000))")
        #expect(taking.waitUntil(timeout: 30) {
            (try? server.psql("SELECT count(*) FROM deliveries WHERE acknowledged_at IS NOT NULL", database: "fleet")) == "3"
        })
        #expect(intake.waitForInboxDrained())
        handler.noteEnd(sandbox: taking.sandbox(Self.molecules), inbox: intake.inbox, quarantine: intake.quarantine)
        let seenOnC = handler.stop()
        #expect(Set(seenOnC.announcements.map { $0.deliveryID.lowercased() }) == ids, "host C was told other ids than B was given")

        // One history of both hosts: each document once in each sandbox, one id, acknowledged once.
        var history = DeliveryHistory()
        for (name, bytes) in documents { history.dropped(name, bytes: bytes) }
        for announcement in told { history.announced(announcement) }
        for var announcement in seenOnC.announcements {
            announcement.host = "host-c"
            history.announced(announcement)
        }
        for id in seenOnC.acks { history.acknowledged(id) }
        history.sandboxes = ["host-b": sandboxB, "host-c": seenOnC.sandbox]
        history.leftInInbox = seenOnC.leftInInbox
        history.quarantined = seenOnC.quarantined
        let problems = history.violations()
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))\n\(history.summary)")
    }

    @Test func aSourceLeftInItsInboxAfterItsCommitIsRemovedNotCommittedAgain() throws {
        let fleet = try FleetHarness()
        defer { fleet.tearDown() }
        let server = fleet.server
        let intake = try fleet.host("host-a", leaseSeconds: 6)
        // Every rename fails: the sources committed to the fleet cannot be taken out of the inbox,
        // as if the daemon had died between the commit and the removal.
        try intake.start(environment: ["DOCROUTE_FAULT": "rename:1+:EIO"])
        #expect(fleet.waitForHosts(["host-a"]))
        let dropped = try intake.drop("kept.pdb", Self.document(1))
        let committed = intake.waitUntil(timeout: 30) {
            (try? server.psql("SELECT count(*) FROM documents WHERE name = 'kept.pdb'", database: "fleet")) == "1"
        }
        #expect(committed, "\(intake.daemonLog.suffix(3000))")
        #expect(intake.waitUntil(timeout: 15) { intake.daemonLog.contains("could not remove a source committed to the fleet") },
                "\(intake.daemonLog.suffix(3000))")
        intake.stop()
        let left = FileManager.default.fileExists(atPath: dropped)
        #expect(left, "the source left its inbox although its removal failed")

        // Started again without the fault, the daemon finds the source committed and removes it.
        try intake.start()
        #expect(intake.waitForInboxDrained(timeout: 30), "\(intake.daemonLog.suffix(3000))")
        // Logged once the batch's outcome is known, while the removal may have run ahead of it.
        #expect(intake.waitUntil(timeout: 10) { intake.daemonLog.contains("source delivered before a crash removed now") },
                "\(intake.daemonLog.suffix(3000))")
        let documents = try server.psql("SELECT count(*) FROM documents", database: "fleet")
        let deliveries = try server.psql("SELECT count(*) FROM deliveries", database: "fleet")
        #expect(documents == "1" && deliveries == "1", "documents \(documents), deliveries \(deliveries)")
    }

    @Test func aHandlerThatLeavesAHostGivesWhatItHeldBackAtOnce() throws {
        let fleet = try FleetHarness()
        defer { fleet.tearDown() }
        let server = fleet.server
        // A lease far longer than the test waits: only a release lets host C have them.
        let hosts = try fleet.startedHosts(["host-a", "host-b", "host-c"], leaseSeconds: 600)
        let (intake, leaving, taking) = (hosts[0], hosts[1], hosts[2])

        let silent = try LineClient(path: leaving.socket, timeout: 5)
        try silent.send(["type": "subscribe", "id": "silent", "bundleIdentifier": Self.molecules])
        #expect(silent.readMessage()?["type"] as? String == "subscribed")
        let handler = HistoryHandler(socket: taking.socket, bundleIdentifier: Self.molecules)
        defer { _ = handler.stop() }
        for index in 0..<3 {
            let name = "given-back-\(index).pdb"
            let bytes = Self.document(index)
            handler.dropped(name, bytes: bytes)
            try intake.drop(name, bytes)
        }
        let held = leaving.waitUntil(timeout: 60) {
            (try? server.psql("SELECT count(*) FROM deliveries WHERE claimed_by = 'host-b'", database: "fleet")) == "3"
        }
        #expect(held, "\((try? server.psql("SELECT state, claimed_by FROM deliveries", database: "fleet")) ?? "?")\n\(leaving.daemonLog.suffix(3000))")
        // Host C's handler subscribes; host B's leaves without acknowledging anything.
        handler.start()
        #expect(taking.waitUntil(timeout: 15) { handler.subscriptionCount > 0 })
        silent.close()
        let acknowledged = taking.waitUntil(timeout: 60) { handler.everyDropAcknowledged }
        #expect(acknowledged, "\(handler.snapshot.summary)\nB:\n\(leaving.daemonLog.suffix(2000))\nC:\n\(taking.daemonLog.suffix(2000))")
        #expect(leaving.daemonLog.contains("deliveries given back"), "\(leaving.daemonLog.suffix(3000))")
        let recorded = taking.waitUntil(timeout: 15) {
            (try? server.psql("SELECT count(*) FROM deliveries WHERE state = 'acknowledged'", database: "fleet")) == "3"
        }
        #expect(recorded)
    }

    @Test func aHandlerSubscribedOnTwoHostsGetsEachDocumentOnce() throws {
        let fleet = try FleetHarness()
        defer { fleet.tearDown() }
        let server = fleet.server
        let hosts = try fleet.startedHosts(["host-a", "host-b"], leaseSeconds: 30)
        let (first, second) = (hosts[0], hosts[1])
        // Two competing instances of one handler, one on each host; files dropped on both.
        let onFirst = fleet.subscribedHandler(on: first)
        let onSecond = fleet.subscribedHandler(on: second)
        var documents: [String: [UInt8]] = [:]
        for index in 0..<24 {
            let name = "shared-\(index).pdb"
            documents[name] = Self.document(index)
            try (index % 2 == 0 ? first : second).drop(name, documents[name]!)
        }
        let acknowledged = first.waitUntil(timeout: 90) {
            (try? server.psql("SELECT count(*) FROM deliveries WHERE state = 'acknowledged'", database: "fleet")) == "24"
        }
        #expect(acknowledged, "\((try? server.psql("SELECT state || ' ' || count(*) FROM deliveries GROUP BY state", database: "fleet")) ?? "?")")
        #expect(first.waitForInboxDrained() && second.waitForInboxDrained())
        onFirst.noteEnd(sandbox: first.sandbox(Self.molecules), inbox: first.inbox, quarantine: first.quarantine)
        onSecond.noteEnd(sandbox: second.sandbox(Self.molecules), inbox: second.inbox, quarantine: second.quarantine)
        let seenOnFirst = onFirst.stop()
        let seenOnSecond = onSecond.stop()

        var history = DeliveryHistory()
        for (name, bytes) in documents { history.dropped(name, bytes: bytes) }
        for (host, seen) in [("host-a", seenOnFirst), ("host-b", seenOnSecond)] {
            for var announcement in seen.announcements {
                announcement.host = host
                history.announced(announcement)
            }
            for id in seen.acks { history.acknowledged(id) }
            history.sandboxes[host] = seen.sandbox
            history.leftInInbox += seen.leftInInbox
            history.quarantined.merge(seen.quarantined) { first, _ in first }
        }
        let problems = history.violations()
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))\n\(history.summary)")
        // Each delivery went to one instance: the two hosts' sandboxes hold 24 documents together.
        #expect(seenOnFirst.sandbox.count + seenOnSecond.sandbox.count == 24,
                "host-a \(seenOnFirst.sandbox.count), host-b \(seenOnSecond.sandbox.count)")
    }

    @Test func moreSmallDocumentsThanOneClaimRoundHoldsInMemoryAreAllDelivered() throws {
        let fleet = try FleetHarness()
        defer { fleet.tearDown() }
        let server = fleet.server
        let hosts = try fleet.startedHosts(["host-a", "host-b"], leaseSeconds: 30)
        let (intake, delivering) = (hosts[0], hosts[1])
        // 40 documents of about 900 KiB (each under a chunk, so each goes to a memory file), 35 MiB
        // in all, committed while the handler is subscribed nowhere: its first claim rounds find
        // them all owed, more than the window's room would take within a round's 16 MiB.
        var documents: [String: [UInt8]] = [:]
        for index in 0..<40 {
            let name = "round-\(index).pdb"
            var bytes = Self.document(index)
            let line = Array("REMARK   \(String(repeating: "x", count: 60)) \(index)\n".utf8)
            while bytes.count + line.count < 900 << 10 { bytes += line }
            documents[name] = bytes
            try intake.drop(name, bytes)
        }
        let owed = intake.waitUntil(timeout: 90) {
            (try? server.psql("SELECT count(*) FROM deliveries WHERE state = 'owed'", database: "fleet")) == "40"
        }
        #expect(owed, "\(intake.daemonLog.suffix(3000))")
        let handler = HistoryHandler(socket: delivering.socket, bundleIdentifier: Self.molecules)
        handler.start()
        defer { _ = handler.stop() }
        let acknowledged = delivering.waitUntil(timeout: 120) {
            (try? server.psql("SELECT count(*) FROM deliveries WHERE state = 'acknowledged'", database: "fleet")) == "40"
        }
        let states = (try? server.psql("SELECT state || ' ' || count(*) FROM deliveries GROUP BY state", database: "fleet")) ?? "?"
        #expect(acknowledged, "\(states)\n\(delivering.daemonLog.suffix(3000))")
        // Every one in B's sandbox, byte for byte, claimed once.
        let sandbox = Self.digests(in: delivering.sandbox(Self.molecules))
        #expect(sandbox.count == 40, "\(sandbox.keys.sorted())")
        for (name, bytes) in documents {
            #expect(sandbox[name] == DeliveryHistory.sha256(bytes), "\(name)")
        }
        #expect(try server.psql("SELECT count(*) FROM deliveries WHERE attempts <> 1", database: "fleet") == "0")
        // In rounds of at most 16 MiB each: a claim's history events share its transaction's time.
        let rounds = try server.psql("""
            SELECT count(*) || ' ' || max(total) FROM (
                SELECT sum(doc.size) AS total FROM history_events AS e JOIN documents AS doc ON doc.id = e.document_id
                WHERE e.event = 'claimed' GROUP BY e.at) AS round
            """, database: "fleet").split(separator: " ").compactMap { Int($0) }
        #expect(rounds.count == 2 && rounds[0] >= 3 && rounds[1] <= 16 << 20, "rounds, largest: \(rounds)")
    }

    /// `host device:inode size mtime-ns` of the file at `path`, as a fleet source's identity
    /// begins (FleetSourceIdentity).
    static func identityPrefix(host: String, path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return "\(host) \(UInt64(info.st_dev)):\(UInt64(info.st_ino)) \(info.st_size) \(Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)) "
    }

    @Test func sourcesACrashLeftHalfRemovedInTheInboxAreSettledByWhatTheFleetCommitted() throws {
        let fleet = try FleetHarness()
        defer { fleet.tearDown() }
        let server = fleet.server
        let intake = try fleet.startedHosts(["host-a"], leaseSeconds: 30)[0]
        // Two documents committed to the fleet (no handler anywhere: they stay owed).
        try intake.drop("committed.pdb", Self.document(1))
        try intake.drop("replaced.pdb", Self.document(2))
        let committed = intake.waitUntil(timeout: 30) {
            (try? server.psql("SELECT count(*) FROM deliveries", database: "fleet")) == "2"
        }
        #expect(committed && intake.waitForInboxDrained(), "\(intake.daemonLog.suffix(3000))")
        func delivery(of name: String) throws -> String {
            try server.psql("SELECT v.id FROM deliveries v JOIN documents d ON d.id = v.document_id WHERE d.name = '\(name)'", database: "fleet")
        }
        let committedID = try delivery(of: "committed.pdb")
        let replacedID = try delivery(of: "replaced.pdb")
        let unknownID = UUID().uuidString.lowercased()
        let reclaimedEvents = "SELECT count(*) FROM history_events WHERE event = 'sourceReclaimed' AND delivery_id = '\(committedID)'"
        _ = intake.waitUntil(timeout: 10) { (try? server.psql(reclaimedEvents, database: "fleet")) == "1" }
        let reclaimedBefore = Int(try server.psql(reclaimedEvents, database: "fleet")) ?? -1
        intake.stop()

        // What a crash between the rename and the unlink leaves (an inbox on another file system
        // than the state directory), planted: the committed source itself (PostgreSQL's identity
        // of it made this file's), another file a sender put under a committed source's name,
        // and a file under an id the fleet never committed.
        func hidden(_ id: String) -> String { intake.inbox + "/.docroute-removing-" + id.uppercased() }
        let sourceBytes = Self.document(1)
        FileManager.default.createFile(atPath: hidden(committedID), contents: Data(sourceBytes))
        let identity = try #require(Self.identityPrefix(host: "host-a", path: hidden(committedID))) + intake.inbox + "/committed.pdb"
        _ = try server.psql("UPDATE documents SET source_identity = '\(identity)' WHERE name = 'committed.pdb'", database: "fleet")
        let senderBytes = Self.document(3)
        FileManager.default.createFile(atPath: hidden(replacedID), contents: Data(senderBytes))
        let strayBytes = Self.document(4)
        FileManager.default.createFile(atPath: hidden(unknownID), contents: Data(strayBytes))

        try intake.start()
        defer { intake.stop() }
        // None stays hidden: the committed source removed and not committed again; the sender's
        // file back under the name and committed as a new document; the stray one back under a
        // name of its own, and taken in as any file is.
        let settled = intake.waitUntil(timeout: 45) {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: intake.inbox)) ?? []
            let again = (try? server.psql("SELECT count(*) FROM documents WHERE name = 'replaced.pdb'", database: "fleet")) ?? ""
            return !names.contains { $0.hasPrefix(".docroute-removing-") } && again == "2" && intake.waitForInboxDrained(timeout: 1)
        }
        let rows = (try? server.psql("SELECT d.name || ' ' || d.size FROM documents d ORDER BY d.created_at", database: "fleet")) ?? "?"
        #expect(settled, "\(rows)\n\(intake.daemonLog.suffix(4000))")
        #expect(try server.psql("SELECT count(*) FROM documents WHERE name = 'committed.pdb'", database: "fleet") == "1", "\(rows)")
        let replacedDigests = try server.psql("""
            SELECT encode(sha256(c.bytes), 'hex') FROM document_chunks c JOIN documents d ON d.id = c.document_id
            WHERE d.name = 'replaced.pdb' ORDER BY d.created_at
            """, database: "fleet").split(separator: "\n").map(String.init)
        #expect(replacedDigests.count == 2 && replacedDigests.last == DeliveryHistory.sha256(senderBytes),
                "the sender's file, committed as a new document: \(replacedDigests)\n\(rows)")
        // The stray file is not lost: committed under its new name, or quarantined if nothing takes it.
        let strayName = "docroute-recovered-\(unknownID)"
        let strayCommitted = (try? server.psql("SELECT count(*) FROM documents WHERE name = '\(strayName)'", database: "fleet")) == "1"
        let quarantined = (FileManager.default.enumerator(atPath: intake.quarantine)?.allObjects as? [String] ?? []).contains { $0.contains(strayName) }
        #expect(strayCommitted || quarantined, "\(rows)\n\(intake.daemonLog.suffix(3000))")
        #expect(intake.daemonLog.contains("has no delivery committed under its id"), "\(intake.daemonLog.suffix(3000))")
        // The committed source's removal is in its history.
        let freed = intake.waitUntil(timeout: 20) {
            (try? server.psql(reclaimedEvents, database: "fleet")) == String(reclaimedBefore + 1)
        }
        #expect(freed, "\((try? server.psql("SELECT event, delivery_id FROM history_events ORDER BY id", database: "fleet")) ?? "?")")
    }

    @Test func acknowledgementsMadeWhilePostgreSQLIsAwayAreRecordedWhenItIsBack() throws {
        let fleet = try FleetHarness()
        defer { fleet.tearDown() }
        let server = fleet.server
        let hosts = try fleet.startedHosts(["host-a", "host-b"], leaseSeconds: 30)
        let (intake, delivering) = (hosts[0], hosts[1])
        let client = try LineClient(path: delivering.socket, timeout: 30)
        defer { client.close() }
        try client.send(["type": "subscribe", "id": "later", "bundleIdentifier": Self.molecules])
        #expect(client.readMessage()?["type"] as? String == "subscribed")
        for index in 0..<3 { try intake.drop("later-\(index).pdb", Self.document(index)) }
        var told: [String] = []
        while told.count < 3, let message = client.readMessage() {
            if message["type"] as? String == "openURL", let id = message["deliveryID"] as? String { told.append(id) }
        }
        #expect(told.count == 3, "host B's handler was told of \(told.count) documents\n\(delivering.daemonLog.suffix(3000))")

        // The handler acknowledges while the database is away: host B keeps the acknowledgements.
        try server.pause()
        for id in told { try client.send(["type": "ack", "deliveryID": id, "handled": true]) }
        #expect(delivering.waitUntil(timeout: 20) { delivering.daemonLog.contains("acknowledgements cannot be recorded") },
                "\(delivering.daemonLog.suffix(3000))")
        try server.start()
        let recorded = delivering.waitUntil(timeout: 60) {
            (try? server.psql("SELECT count(*) FROM deliveries WHERE state = 'acknowledged'", database: "fleet")) == "3"
        }
        #expect(recorded, "\((try? server.psql("SELECT state || ' ' || count(*) FROM deliveries GROUP BY state", database: "fleet")) ?? "?")\n\(delivering.daemonLog.suffix(3000))")
        let ids = Set(try server.psql("SELECT id FROM deliveries WHERE state = 'acknowledged'", database: "fleet").split(separator: "\n").map { $0.lowercased() })
        #expect(ids == Set(told.map { $0.lowercased() }))
    }

    @Test func whatAHostClaimedBeforeARestartAndNeverCopiedIsDeliveredAfterItsLease() throws {
        let fleet = try FleetHarness()
        defer { fleet.tearDown() }
        let server = fleet.server
        let hosts = try fleet.startedHosts(["host-a", "host-b"], leaseSeconds: 3)
        let (intake, restarted) = (hosts[0], hosts[1])
        let bytes = Self.document(3)
        try intake.drop("lost-claim.pdb", bytes)
        #expect(intake.waitForInboxDrained(timeout: 30))
        // As a host B that claimed it and died before its copy, then came back under its name.
        _ = try server.psql("UPDATE deliveries SET state = 'claimed', claimed_by = 'host-b', lease_until = now() + interval '2 seconds'", database: "fleet")
        // Longer than two leases: host B renewing it now would keep it from everyone for ever.
        usleep(7_000_000)
        let handler = HistoryHandler(socket: restarted.socket, bundleIdentifier: Self.molecules)
        handler.dropped("lost-claim.pdb", bytes: bytes)
        handler.start()
        defer { _ = handler.stop() }
        let acknowledged = restarted.waitUntil(timeout: 60) { handler.everyDropAcknowledged }
        #expect(acknowledged, "\(handler.snapshot.summary)\n\((try? server.psql("SELECT state, claimed_by, lease_until < now() FROM deliveries", database: "fleet")) ?? "?")")
    }

    @Test func quarantineAndOpenStayOnTheHostWhereTheyArrive() throws {
        let fleet = try FleetHarness()
        defer { fleet.tearDown() }
        let server = fleet.server
        let intake = try fleet.startedHosts(["host-a"], leaseSeconds: 30)[0]
        // A file no handler claims is quarantined on this host, as without a fleet.
        try intake.drop("mystery.zzq", Array("nothing claims this\n".utf8))
        #expect(intake.waitForInboxDrained(timeout: 30), "\(intake.daemonLog.suffix(3000))")
        #expect(Self.files(in: intake.quarantine + "/Inbox").contains("mystery.zzq"), "\(Self.files(in: intake.quarantine + "/Inbox"))")
        // `open` of a client's own file is copied into this host's sandbox, through its own ledger.
        let original = intake.root + "/opened.pdb"
        try Data(Self.document(5)).write(to: URL(fileURLWithPath: original))
        let opened = try CtlProcess.run(["open", "--socket", intake.socket, original])
        #expect(opened.status == 0, "\(opened.error)")
        let shared = intake.sandbox(Self.molecules, mailbox: "Shared")
        #expect(Self.files(in: shared) == ["opened.pdb"], "\(Self.files(in: shared))")
        let rows = try server.psql("SELECT count(*) FROM deliveries", database: "fleet")
        #expect(rows == "0", "the fleet got \(rows) deliveries")
    }

    @Test func aDocumentOfSeveralChunksArrivesWhole() throws {
        let fleet = try FleetHarness()
        defer { fleet.tearDown() }
        let server = fleet.server
        let hosts = try fleet.startedHosts(["host-a", "host-b"], leaseSeconds: 30)
        let (intake, delivering) = (hosts[0], hosts[1])
        let handler = fleet.subscribedHandler(on: delivering)
        // 3.5 MiB: four chunks of the fleet's 1 MiB, the last one short.
        var generator = SplitMix(seed: 77)
        var bytes = Self.document(0)
        while bytes.count < 3_670_016 {
            bytes += Array("REMARK \(generator.next())\n".utf8)
        }
        handler.dropped("large.pdb", bytes: bytes)
        try intake.drop("large.pdb", bytes)
        let acknowledged = intake.waitUntil(timeout: 60) { handler.everyDropAcknowledged }
        #expect(acknowledged, "\(handler.snapshot.summary)\n\(delivering.daemonLog.suffix(3000))")
        #expect(intake.waitForInboxDrained())
        handler.noteEnd(sandbox: delivering.sandbox(Self.molecules), inbox: intake.inbox, quarantine: intake.quarantine)
        let history = handler.stop()
        let problems = history.violations()
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))\n\(history.summary)")
        // Acknowledged everywhere, its bytes are gone from the database.
        let recorded = intake.waitUntil(timeout: 15) {
            (try? server.psql("SELECT count(*) FROM document_chunks", database: "fleet")) == "0"
        }
        #expect(recorded, "chunks left: \((try? server.psql("SELECT count(*) FROM document_chunks", database: "fleet")) ?? "?")")
    }
}
