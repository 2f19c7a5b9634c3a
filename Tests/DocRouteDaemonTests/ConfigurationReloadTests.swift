import Testing
@testable import DocRouteConfiguration

/// What a reload (SIGHUP) takes from the configuration file into a running daemon, and what it
/// leaves for a restart.
@Suite struct ConfigurationReloadTests {
    static func configuration(_ body: String) throws -> DaemonConfiguration {
        try DaemonConfiguration.parse(body, file: "/etc/docroute/docroute.toml")
    }

    static let running = """
        socket = "/run/docroute/docroute.sock"
        max_connections = 256
        max_file_size = 1000

        [[inbox]]
        path = "/srv/a"

        [[inbox]]
        path = "/srv/b"
        kind = "maildir"

        [[inbox]]
        path = "/srv/c"
        default_mailbox = "C"
        """

    @Test func inboxesAreAddedRetiredAndChangedInPlace() throws {
        let current = try Self.configuration(Self.running)
        let file = try Self.configuration("""
            socket = "/run/docroute/docroute.sock"
            max_connections = 256
            max_file_size = 1000

            [[inbox]]
            path = "/srv/c"
            default_mailbox = "Scans"

            [[inbox]]
            path = "/srv/b"
            kind = "directory"

            [[inbox]]
            path = "/srv/d"
            """)
        let reload = current.reloaded(from: file)
        // a is gone; b changed kind, so it retires and comes back as a new inbox; c keeps its place.
        #expect(reload.retiredInboxes == [0, 1])
        #expect(reload.changedInboxes == [2])
        #expect(reload.addedInboxes == [3, 4])
        let inboxes = reload.configuration.inboxes
        #expect(inboxes.map(\.path) == ["/srv/a", "/srv/b", "/srv/c", "/srv/b", "/srv/d"])
        #expect(inboxes.map(\.retired) == [true, true, false, false, false])
        #expect(inboxes[2].defaultMailbox == "Scans")
        #expect(inboxes[3].kind == .directory)
        #expect(reload.configuration.servedInboxes.map(\.index) == [2, 3, 4])
        #expect(reload.applied == ["inbox"])
        #expect(reload.needsRestart.isEmpty)
    }

    @Test func liveKeysAreTakenAndTheOthersNamedForARestart() throws {
        let current = try Self.configuration(Self.running)
        let file = try Self.configuration(Self.running
            .replacingOccurrences(of: "max_file_size = 1000", with: "max_file_size = 2000\nmax_mailboxes = 10")
            .replacingOccurrences(of: "max_connections = 256", with: "max_connections = 64")
            .replacingOccurrences(of: "/run/docroute/docroute.sock", with: "/run/other.sock"))
        let reload = current.reloaded(from: file)
        // max_file_allocation follows max_file_size when the file does not set it.
        #expect(reload.applied == ["max_file_size", "max_file_allocation", "max_mailboxes"])
        #expect(reload.needsRestart == ["socket", "max_connections"])
        #expect(reload.configuration.maxFileSize == 2000)
        #expect(reload.configuration.maxMailboxes == 10)
        // What needs a restart keeps its running value.
        #expect(reload.configuration.socket == "/run/docroute/docroute.sock")
        #expect(reload.configuration.maxConnections == 256)
        #expect(reload.addedInboxes.isEmpty && reload.retiredInboxes.isEmpty && reload.changedInboxes.isEmpty)
    }

    @Test func aRetiredInboxNamedAgainIsServedAnew() throws {
        let current = try Self.configuration(Self.running)
        let without = try Self.configuration(Self.running.replacingOccurrences(of: "[[inbox]]\npath = \"/srv/a\"\n", with: ""))
        let first = current.reloaded(from: without)
        #expect(first.retiredInboxes == [0])
        let second = first.configuration.reloaded(from: current)
        #expect(second.addedInboxes == [3])
        #expect(second.configuration.servedInboxes.map(\.inbox.path) == ["/srv/b", "/srv/c", "/srv/a"])
    }

    /// Every key the parser takes is either taken at a reload or named for a restart; none is
    /// silently ignored.
    @Test func everyKeyIsEitherLiveOrNeedsARestart() {
        let known = Set(DaemonConfiguration.liveKeys.map(\.name) + DaemonConfiguration.restartKeys.map(\.name) + ["inbox"])
        #expect(DaemonConfiguration.topLevelKeys.subtracting(known).isEmpty, "\(DaemonConfiguration.topLevelKeys.subtracting(known).sorted())")
    }
}
