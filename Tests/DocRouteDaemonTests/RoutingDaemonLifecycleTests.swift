import DocRouteProtocol
import Foundation
import Logging
import Testing
@testable import DocRouteConfiguration
@testable import DocRouteDaemon
@testable import DocRouteDelivery
@testable import DocRouteServer

/// The daemon's states: what it refuses before it started and after it stopped, and what it
/// answers on its socket in between.
@Suite("RoutingDaemon lifecycle")
struct RoutingDaemonLifecycleTests {
    @Test("calls in the wrong state are refused, naming the state; a running daemon answers on its socket; a stopped one removed it")
    func lifecycle() async throws {
        var template = Array("/tmp/docroute-daemon-test.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw POSIXError(.EIO) }
        let folder = String(cString: made)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for name in ["inbox", "handlers", "state"] {
            try FileManager.default.createDirectory(atPath: folder + "/" + name, withIntermediateDirectories: true)
        }
        var configuration = try DaemonConfiguration.parse("[[inbox]]\npath = \"\(folder)/inbox\"\n", file: "test")
        configuration.socket = folder + "/docroute.sock"
        configuration.stateDirectory = folder + "/state"
        configuration.containersDirectory = folder + "/containers"
        configuration.handlersDirectory = folder + "/handlers"
        configuration.quarantineDirectory = folder + "/quarantine"
        configuration.metricsTextfile = nil
        let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        let backend = try LedgerBackend(configuration: configuration, logger: logger)
        defer { backend.close() }
        let daemon = try RoutingDaemon(configuration: configuration, backend: backend, notifier: nil, logger: logger)

        let early = await #expect(throws: LifecycleError.self) { try await daemon.reload() }
        #expect(early?.message == "docrouted is not started: handlers and defaults are reloaded only while it runs")
        let notRunning = await #expect(throws: LifecycleError.self) { try await daemon.run() }
        #expect(notRunning?.message == "docrouted is not started: start it before running it")

        try await daemon.start(listeningOn: .path(configuration.socket))
        let twice = await #expect(throws: LifecycleError.self) { try await daemon.start(listeningOn: .path(folder + "/other.sock")) }
        #expect(twice?.message == "docrouted's core was started already (it is running); it starts once")
        let client = try SocketServerTests.LineClient(configuration.socket)
        try await client.write(#"{"type":"hello","protocol":1,"id":"h"}"# + "\n")
        guard case .welcome(1, DocRouteVersion.daemon, "h", _, _)? = try await client.readMessage() else {
            Issue.record("a running daemon answers hello with its welcome")
            await daemon.shutdown()
            return
        }
        try await daemon.reload(reason: "test")

        await daemon.shutdown()
        #expect(!FileManager.default.fileExists(atPath: configuration.socket))
        // Its connections ended with it.
        #expect(try await client.readLine() == nil)
        let late = await #expect(throws: LifecycleError.self) { try await daemon.reload() }
        #expect(late?.message == "docrouted is stopped: handlers and defaults are reloaded only while it runs")
        // Stopping again is harmless.
        await daemon.shutdown()
    }
}
