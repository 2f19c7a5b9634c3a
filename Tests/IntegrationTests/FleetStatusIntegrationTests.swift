import DocRouteClient
import DocRouteTestSupport
import Foundation
import Testing

/// `docroutectl status` on a host of a fleet: every host with its heartbeat, the handlers
/// subscribed on it and what it holds; and, with the database stopped, that it cannot be reached.
@Suite(.serialized) struct FleetStatusIntegrationTests {
    static let molecules = FleetDeliveryIntegrationTests.molecules

    @Test func statusShowsEachHostItsHandlersAndTheDatabaseGone() async throws {
        let fleet = try FleetHarness()
        defer { fleet.tearDown() }
        let server = fleet.server
        let intake = try fleet.host("host-a", leaseSeconds: 6)
        let textfile = intake.root + "/docroute.prom"
        let config = try String(contentsOfFile: intake.configPath, encoding: .utf8)
        try config.replacingOccurrences(of: "[fleet]", with: "metrics_textfile = \"\(textfile)\"\n\n[fleet]")
            .write(toFile: intake.configPath, atomically: true, encoding: .utf8)
        let delivering = try fleet.host("host-b", leaseSeconds: 6)
        try intake.start()
        try delivering.start()
        #expect(fleet.waitForHosts(["host-a", "host-b"]))

        // On host B a handler that takes documents and never acknowledges them: B holds its claims.
        let silent = try LineClient(path: delivering.socket, timeout: 5)
        defer { silent.close() }
        try silent.send(["type": "subscribe", "id": "s", "bundleIdentifier": Self.molecules])
        #expect(silent.readMessage()?["type"] as? String == "subscribed")
        for index in 0..<3 {
            try intake.drop("held-\(index).pdb", FleetDeliveryIntegrationTests.document(index))
        }
        let copied = delivering.waitUntil(timeout: 60) { FleetDeliveryIntegrationTests.files(in: delivering.sandbox(Self.molecules)).count == 3 }
        #expect(copied, "\(delivering.daemonLog.suffix(3000))")

        var shown = ""
        let complete = intake.waitUntil(timeout: 20) {
            guard let status = try? CtlProcess.run(["status", "--socket", intake.socket]) else { return false }
            shown = status.output + status.error + "(exit \(String(describing: status.status)))"
            let hostB = status.output.split(separator: "\n").first { $0.hasPrefix("  host-b") }.map(String.init) ?? ""
            return hostB.contains(Self.molecules) && hostB.contains("  3  ")
        }
        #expect(complete, "\(shown)\nA:\n\(intake.daemonLog.suffix(3000))")
        let lines = shown.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("fleet: this host host-a; database ") && $0.contains("owed 0") }, "\(shown)")
        #expect(lines.contains { $0.contains("HOST") && $0.contains("LAST HEARTBEAT") && $0.contains("SUBSCRIBED HANDLERS") }, "\(shown)")
        let hostA = lines.first { $0.contains("host-a (this host)") } ?? ""
        #expect(hostA.contains("ago") && hostA.contains("same") && !hostA.contains("GONE"), "\(shown)")

        let json = try CtlProcess.run(["status", "--socket", intake.socket, "--json"]).output
        let report = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] ?? [:]
        let view = report["fleet"] as? [String: Any] ?? [:]
        #expect(view["reachable"] as? Bool == true && view["host"] as? String == "host-a", "\(json)")
        let hosts = view["hosts"] as? [[String: Any]] ?? []
        #expect(hosts.map { $0["name"] as? String } == ["host-a", "host-b"], "\(json)")
        #expect(hosts.last?["subscribed"] as? [String] == [Self.molecules] && hosts.last?["claimed"] as? Int == 3, "\(json)")
        // Per handler, asked on host A: where it has live instances.
        let handlers = report["handlers"] as? [[String: Any]] ?? []
        let molecules = handlers.first { $0["bundleIdentifier"] as? String == Self.molecules }
        #expect(molecules?["hosts"] as? [String] == ["host-b"] && molecules?["subscribed"] as? Bool == false, "\(json)")
        #expect(handlers.filter { $0["bundleIdentifier"] as? String != Self.molecules }.allSatisfy { $0["hosts"] as? [String] == [] }, "\(json)")
        let handlerHeader = lines.first { $0.hasPrefix("HANDLER") } ?? ""
        let moleculesRow = lines.first { $0.hasPrefix(Self.molecules + " ") } ?? ""
        #expect(handlerHeader.contains("SUBSCRIBED  HOSTS"), "\(shown)")
        #expect(moleculesRow.contains(" host-b "), "\(shown)")

        // The metrics: per host what it holds and whether it lives, per handler what is owed.
        var samples: [String: Double] = [:]
        let measured = intake.waitUntil(timeout: 40) {
            guard let text = try? String(contentsOfFile: textfile, encoding: .utf8), let parsed = try? PrometheusText.parse(text) else { return false }
            samples = parsed
            return parsed[#"docroute_fleet_claimed{host="host-b"}"#] == 3
        }
        #expect(measured, "\(samples.filter { $0.key.contains("fleet") })")
        #expect(samples["docroute_fleet_database_reachable"] == 1)
        #expect(samples[#"docroute_fleet_host_live{host="host-a"}"#] == 1 && samples[#"docroute_fleet_host_live{host="host-b"}"#] == 1)
        #expect(samples[#"docroute_fleet_claimed{host="host-a"}"#] == 0)

        // A second instance, on host A: both hosts, as the text, the Swift client and the Python
        // client each show it.
        let second = try LineClient(path: intake.socket, timeout: 5)
        defer { second.close() }
        try second.send(["type": "subscribe", "id": "s", "bundleIdentifier": Self.molecules])
        #expect(second.readMessage()?["type"] as? String == "subscribed")
        var both = ""
        let bothShown = intake.waitUntil(timeout: 20) {
            guard let status = try? CtlProcess.run(["status", "--socket", intake.socket]) else { return false }
            both = status.output
            return both.split(separator: "\n").contains { $0.hasPrefix(Self.molecules + " ") && $0.contains("host-a, host-b") }
        }
        #expect(bothShown, "\(both)")
        let connection = try await DocRouteConnection.connect(socketPath: intake.socket)
        let entry = try await connection.status().handlers.first { $0.bundleIdentifier == Self.molecules }
        await connection.close()
        #expect(entry?.hosts == ["host-a", "host-b"] && entry?.instances == 1, "asked on host A: \(String(describing: entry))")
        let viaPython = try Self.pythonHosts(socket: delivering.socket, handler: Self.molecules)
        #expect(viaPython == "['host-a', 'host-b'] 1", "asked on host B")

        // The database stopped: status still answers, and says so.
        server.stop()
        let gone = try CtlProcess.run(["status", "--socket", intake.socket])
        #expect(gone.status == 0, "\(gone.error)")
        #expect(gone.output.contains("fleet: this host host-a; database ") && gone.output.contains("NOT REACHABLE"), "\(gone.output)")
        #expect(gone.output.contains("files wait in their inboxes"), "\(gone.output)")
        let unreachable = intake.waitUntil(timeout: 40) {
            (try? String(contentsOfFile: textfile, encoding: .utf8)).flatMap { try? PrometheusText.parse($0) }?["docroute_fleet_database_reachable"] == 0
        }
        #expect(unreachable, "the metrics still say the database answers")
        // And with it no handler names hosts: unknown is not nowhere.
        let unknown = try CtlProcess.run(["status", "--socket", intake.socket, "--json"]).output
        let unknownHandlers = (try JSONSerialization.jsonObject(with: Data(unknown.utf8)) as? [String: Any])?["handlers"] as? [[String: Any]] ?? []
        #expect(!unknownHandlers.isEmpty && unknownHandlers.allSatisfy { $0["hosts"] == nil }, "\(unknown)")
    }

    /// `hosts` and `instances` of `handler` in a `status` asked with the Python client
    /// (Clients/Python, as it is in the repository).
    static func pythonHosts(socket: String, handler: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", """
            import sys, docroute
            with docroute.connect(sys.argv[1], timeout=10) as connection:
                entry = connection.status().handler(sys.argv[2])
                print(entry.hosts, entry.instances)
            """, socket, handler]
        var environment = ProcessInfo.processInfo.environment
        environment["PYTHONPATH"] = DaemonHarness.repositoryRoot + "/Clients/Python/src"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
