import DocRouteTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Launch on demand in a fleet, with real docrouted hosts and a real PostgreSQL: a file dropped on
/// one host for a handler connected nowhere is delivered by launching that handler on a host whose
/// manifest has a launch command, and only there; while no such host is up, it waits and `status`
/// says why.
@Suite(.serialized) struct FleetLaunchIntegrationTests {
    static let molecules = FleetDeliveryIntegrationTests.molecules

    /// Makes the Molecules manifest of `harness` launch a handler that notes each launch in
    /// `<root>/launched`, subscribes (`docroutectl subscribe --count 1`) and copies the one
    /// document it gets into `<root>/received/` before acknowledging it.
    static func installLaunchedHandler(in harness: DaemonHarness) throws -> (launched: String, received: String) {
        let launched = harness.root + "/launched"
        let received = harness.root + "/received"
        try FileManager.default.createDirectory(atPath: received, withIntermediateDirectories: true)
        let script = harness.root + "/handler.sh"
        try """
            #!/bin/sh
            echo "$DOCROUTE_BUNDLE_IDENTIFIER" >> \(launched)
            exec \(DaemonHarness.binDirectory)/docroutectl subscribe "$DOCROUTE_BUNDLE_IDENTIFIER" --socket "$DOCROUTE_SOCKET" --count 1 \
                --exec /bin/sh -c 'cp "$0" \(received)/'
            """.write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        let manifest = harness.handlers + "/molecules.plist"
        var text = try String(contentsOfFile: manifest, encoding: .utf8)
        let sample = "<string>/bin/sh</string>\n<string>-c</string>\n<string>exec docroutectl subscribe com.sunsetlakesoftware.molecules --count 1</string>"
        if text.contains(sample) {
            text = text.replacingOccurrences(of: sample, with: "<string>\(script)</string>")
        } else {
            // The harness stripped the sample's launch command: this handler alone gets one.
            let user = "<key>DocRouteUser</key>"
            #expect(text.contains(user), "the sample manifest has no DocRouteUser")
            text = text.replacingOccurrences(of: user, with: "<key>DocRouteLaunchCommand</key>\n<array><string>\(script)</string></array>\n" + user)
        }
        try text.write(toFile: manifest, atomically: true, encoding: .utf8)
        return (launched, received)
    }

    /// Host A, which takes files in and has no launch command, and host B, whose Molecules
    /// manifest launches the handler of ``installLaunchedHandler(in:)``; neither started.
    static func intakeAndLauncher(in fleet: FleetHarness) throws
        -> (intake: DaemonHarness, launching: DaemonHarness, handler: (launched: String, received: String)) {
        let intake = try fleet.host("host-a", leaseSeconds: 6)
        let launching = try fleet.host("host-b", leaseSeconds: 6, launchCommands: true)
        return (intake, launching, try installLaunchedHandler(in: launching))
    }

    static func fleetStatus(_ harness: DaemonHarness) throws -> [String: Any] {
        let json = try CtlProcess.run(["status", "--socket", harness.socket, "--json"]).output
        let report = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] ?? [:]
        return report["fleet"] as? [String: Any] ?? [:]
    }

    @Test func aHandlerConnectedNowhereIsLaunchedOnTheHostThatCanLaunchIt() throws {
        let fleet = try FleetHarness()
        defer { fleet.tearDown() }
        let server = fleet.server
        // Host A takes the file in and cannot launch the handler (no launch command in its
        // manifest); host B can. No instance of it is connected anywhere.
        let (intake, launching, handler) = try Self.intakeAndLauncher(in: fleet)
        try intake.start()
        try launching.start()
        #expect(fleet.waitForHosts(["host-a", "host-b"], live: true), "\(intake.daemonLog.suffix(2000))")
        let registered = try server.psql("SELECT name || ':' || launchable::text FROM hosts ORDER BY name", database: "fleet")
        #expect(registered == "host-a:{}\nhost-b:{\(Self.molecules)}", "\(registered)")

        let bytes = FleetDeliveryIntegrationTests.document(42)
        try intake.drop("launched-here.pdb", bytes)
        #expect(intake.waitForInboxDrained(timeout: 30), "\(intake.daemonLog.suffix(3000))")

        let copy = handler.received + "/launched-here.pdb"
        let got = launching.waitUntil(timeout: 60) { FileManager.default.contents(atPath: copy) == Data(bytes) }
        #expect(got, "the launched handler did not get the document:\nB:\n\(launching.daemonLog.suffix(4000))\nA:\n\(intake.daemonLog.suffix(2000))")
        // Acknowledged once, on host B, in the database.
        let acknowledged = launching.waitUntil(timeout: 30) {
            (try? server.psql("SELECT state || ' ' || handled::text || ' ' || claimed_by FROM deliveries", database: "fleet")) == "acknowledged true host-b"
        }
        let states = (try? server.psql("SELECT state, claimed_by, attempts FROM deliveries", database: "fleet")) ?? "?"
        #expect(acknowledged, "\(states)\n\(launching.daemonLog.suffix(3000))")
        #expect(try server.psql("SELECT count(*) FROM history_events WHERE event = 'acknowledged'", database: "fleet") == "1")
        // Its history, asked on A where it arrived: host B launched its handler, before B claimed it.
        let story = FleetHistoryIntegrationTests.history(["launched-here.pdb"], on: intake) {
            FleetHistoryIntegrationTests.squeezed($0).contains("acknowledged on host host-b")
        }
        let storyLines = FleetHistoryIntegrationTests.squeezed(story.output).split(separator: "\n").map(String.init)
        let launchedLine = storyLines.firstIndex { $0.contains("launched on host host-b, handler \(Self.molecules)") }
        let claimedLine = storyLines.firstIndex { $0.contains("claimed on host host-b") }
        #expect(launchedLine != nil && claimedLine != nil && launchedLine! < claimedLine!, "\(story.output)")
        let storyJSON = FleetHistoryIntegrationTests.documents(
            FleetHistoryIntegrationTests.history(["launched-here.pdb", "--json"], on: launching) { !$0.isEmpty }.output)
        #expect(storyJSON.first.map(FleetHistoryIntegrationTests.events)?.contains("launched") == true, "asked on B, its own event names no host: \(storyJSON)")
        // Launched once, on B; never on A.
        let launches = ((try? String(contentsOfFile: handler.launched, encoding: .utf8)) ?? "").split(separator: "\n")
        #expect(launches == [Substring(Self.molecules)], "\(launches)")
        #expect(launching.daemonLog.contains("fleet: launching a handler owed deliveries and connected on no host"), "\(launching.daemonLog.suffix(3000))")
        #expect(!intake.daemonLog.contains("handler launched") && !intake.daemonLog.contains("fleet: launching"), "\(intake.daemonLog.suffix(3000))")
        #expect(FleetDeliveryIntegrationTests.files(in: intake.sandbox(Self.molecules)).isEmpty)

        // Its launch command taken out of B's manifest (reloaded as the file changes): B no
        // longer offers to launch it.
        let manifest = launching.handlers + "/molecules.plist"
        var text = try String(contentsOfFile: manifest, encoding: .utf8)
        if let start = text.range(of: "<key>DocRouteLaunchCommand</key>"), let end = text.range(of: "</array>", range: start.upperBound..<text.endIndex) {
            text.removeSubrange(start.lowerBound..<end.upperBound)
        }
        try text.write(toFile: manifest, atomically: true, encoding: .utf8)
        let withdrawn = launching.waitUntil(timeout: 30) {
            (try? server.psql("SELECT launchable::text FROM hosts WHERE name = 'host-b'", database: "fleet")) == "{}"
        }
        #expect(withdrawn, "\((try? server.psql("SELECT launchable FROM hosts", database: "fleet")) ?? "?")\n\(launching.daemonLog.suffix(2000))")
    }

    @Test func ofTwoHostsThatCanLaunchItTheOneHoldingFewerClaimsDoes() throws {
        let fleet = try FleetHarness()
        defer { fleet.tearDown() }
        let server = fleet.server
        // B and C can launch Molecules (and nothing else); B comes first by name but is busy.
        let intake = try fleet.host("host-a", leaseSeconds: 6)
        let busy = try fleet.host("host-b", leaseSeconds: 6)
        let idle = try fleet.host("host-c", leaseSeconds: 6)
        let onB = try Self.installLaunchedHandler(in: busy)
        let onC = try Self.installLaunchedHandler(in: idle)
        for harness in [intake, busy, idle] { try harness.start() }
        #expect(fleet.waitForHosts(["host-a", "host-b", "host-c"], live: true), "\(intake.daemonLog.suffix(2000))")

        // Host B holds three claims of another handler, whose instance there never acknowledges.
        for index in 0..<3 { try intake.drop("note-\(index).txt", Array("a note \(index)\n".utf8)) }
        #expect(intake.waitUntil(timeout: 30) {
            (try? server.psql("SELECT count(*) FROM deliveries", database: "fleet")) == "3"
        }, "\(intake.daemonLog.suffix(3000))")
        let other = try server.psql("SELECT DISTINCT handler FROM deliveries", database: "fleet")
        #expect(!other.isEmpty && other.lowercased() != Self.molecules, "\(other)")
        let silent = try LineClient(path: busy.socket, timeout: 5)
        defer { silent.close() }
        try silent.send(["type": "subscribe", "id": "silent", "bundleIdentifier": other])
        #expect(silent.readMessage()?["type"] as? String == "subscribed")
        #expect(busy.waitUntil(timeout: 30) {
            (try? server.psql("SELECT count(*) FROM deliveries WHERE state = 'claimed' AND claimed_by = 'host-b'", database: "fleet")) == "3"
        }, "\((try? server.psql("SELECT state, claimed_by FROM deliveries", database: "fleet")) ?? "?")")

        let bytes = FleetDeliveryIntegrationTests.document(44)
        try intake.drop("least-busy.pdb", bytes)
        let copy = onC.received + "/least-busy.pdb"
        let got = idle.waitUntil(timeout: 60) { FileManager.default.contents(atPath: copy) == Data(bytes) }
        #expect(got, "host C's launched handler did not get the document:\nC:\n\(idle.daemonLog.suffix(3000))\nB:\n\(busy.daemonLog.suffix(3000))")
        #expect(idle.waitUntil(timeout: 30) {
            (try? server.psql("SELECT state || ' ' || claimed_by FROM deliveries WHERE handler = '\(Self.molecules)'", database: "fleet")) == "acknowledged host-c"
        })
        #expect(((try? String(contentsOfFile: onC.launched, encoding: .utf8)) ?? "").split(separator: "\n") == [Substring(Self.molecules)])
        #expect(!FileManager.default.fileExists(atPath: onB.launched), "host B launched it too")
        #expect(!busy.daemonLog.contains("handler launched") && !intake.daemonLog.contains("handler launched"))
    }

    @Test func whileTheOnlyHostThatCanLaunchItIsDownTheDocumentWaitsAndStatusSaysWhy() throws {
        let fleet = try FleetHarness()
        defer { fleet.tearDown() }
        let server = fleet.server
        let (intake, launching, handler) = try Self.intakeAndLauncher(in: fleet)
        // B registers once, then goes down: its row stays, its heartbeat ages past its lease.
        try launching.start()
        try intake.start()
        #expect(fleet.waitForHosts(["host-a", "host-b"], live: true), "\(intake.daemonLog.suffix(2000))")
        launching.stop()
        #expect(fleet.waitForHosts(["host-a"], live: true), "host B still counts as live")

        let bytes = FleetDeliveryIntegrationTests.document(43)
        try intake.drop("waiting.pdb", bytes)
        #expect(intake.waitForInboxDrained(timeout: 30), "\(intake.daemonLog.suffix(3000))")
        var waiting = ""
        let said = intake.waitUntil(timeout: 20) {
            waiting = ((try? Self.fleetStatus(intake))?["waiting"] as? [String: String])?[Self.molecules] ?? ""
            return waiting.contains("only host-b can launch it")
        }
        #expect(said, "status's fleet.waiting: \(waiting)")
        let hosts = (try Self.fleetStatus(intake))["hosts"] as? [[String: Any]] ?? []
        #expect(hosts.first { $0["name"] as? String == "host-b" }?["launchable"] as? [String] == [Self.molecules], "\(hosts)")
        let shown = try CtlProcess.run(["status", "--socket", intake.socket]).output
        let lines = shown.split(separator: "\n")
        #expect(lines.contains { $0.contains("\(Self.molecules): subscribed on no live host; only host-b can launch it") }, "\(shown)")
        #expect(lines.contains { $0.contains("host-b") && $0.contains("GONE") && $0.contains(Self.molecules) }, "\(shown)")
        #expect(try server.psql("SELECT state FROM deliveries", database: "fleet") == "owed")
        #expect(!intake.daemonLog.contains("handler launched"))

        // B back: it launches the handler, which gets the document.
        try launching.start()
        let copy = handler.received + "/waiting.pdb"
        let got = launching.waitUntil(timeout: 60) { FileManager.default.contents(atPath: copy) == Data(bytes) }
        #expect(got, "the launched handler did not get the document:\n\(launching.daemonLog.suffix(4000))")
        #expect(launching.waitUntil(timeout: 30) {
            (try? server.psql("SELECT state || ' ' || claimed_by FROM deliveries", database: "fleet")) == "acknowledged host-b"
        })
        #expect(!intake.daemonLog.contains("handler launched"))
    }
}
