@testable import DocRouteConfiguration
@testable import DocRouteDelivery
@testable import DocRoutePlatform
@testable import DocRouteServer
import DocRouteTestSupport
import Foundation
import Testing

/// The defences against hostile local users that need no daemon: lookups safe from any thread, the
/// administrators' group, the connection accounting, the new configuration keys.
@Suite struct DaemonLimitsTests {
    @Test func userAndGroupLookupsAnswerLikeTheSystem() {
        #expect(UserDatabase.user(named: "root")?.uid == 0)
        #expect(UserDatabase.user(id: 0)?.name == "root")
        #expect(UserDatabase.user(named: "no-such-user-docroute") == nil)
        #expect(UserDatabase.group(named: "root")?.gid == 0)
        #expect(UserDatabase.groups(of: "root", primary: 0).first == 0)
    }

    /// Item 1's cause: the non-reentrant calls share one buffer. These answer the same from many
    /// threads at once.
    @Test func lookupsFromManyThreadsAtOnceAgree() async {
        let expected = UserDatabase.user(id: 65534)
        let results = await withTaskGroup(of: Bool.self, returning: [Bool].self) { group in
            for index in 0..<8 {
                group.addTask {
                    for _ in 0..<2_000 {
                        if index % 2 == 0 {
                            guard UserDatabase.user(id: 65534) == expected else { return false }
                        } else {
                            guard UserDatabase.group(named: "root")?.gid == 0, UserDatabase.user(named: "root")?.uid == 0 else { return false }
                        }
                    }
                    return true
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results == Array(repeating: true, count: 8))
    }

    @Test func administratorsAreRootTheGroupsGidAndItsListedMembers() {
        let group = AdministratorGroup(name: "staff", gid: 50, memberUIDs: [1000])
        #expect(group.admits(PeerCredentials(pid: 1, uid: 0, gid: 0)))
        #expect(group.admits(PeerCredentials(pid: 1, uid: 1000, gid: 1000)))
        #expect(group.admits(PeerCredentials(pid: 1, uid: 2000, gid: 50)))
        #expect(!group.admits(PeerCredentials(pid: 1, uid: 2000, gid: 2000)))
        let missing = AdministratorGroup(name: "absent", gid: nil)
        #expect(!missing.admits(PeerCredentials(pid: 1, uid: 1000, gid: 50)))
        #expect(missing.admits(PeerCredentials(pid: 1, uid: 0, gid: 0)))
    }

    @Test func connectionsArePerUIDWithRoomKeptForHandlers() {
        let ledger = ConnectionLimits.Ledger(limits: ConnectionLimits(maxConnections: 10, maxPerUID: 3, reservedForHandlers: 4))
        let user = PeerCredentials(pid: 1, uid: 1000, gid: 1000)
        for _ in 0..<3 { #expect(ledger.admit(user, isHandlerUser: false) == nil) }
        #expect(ledger.admit(user, isHandlerUser: false)?.contains("from uid 1000") == true)
        for uid in 2000..<2003 { #expect(ledger.admit(PeerCredentials(pid: 1, uid: UInt32(uid), gid: 1), isHandlerUser: false) == nil) }
        // Six open: the last four are for handlers and root.
        #expect(ledger.admit(PeerCredentials(pid: 1, uid: 3000, gid: 1), isHandlerUser: false)?.contains("kept for handlers") == true)
        #expect(ledger.admit(PeerCredentials(pid: 1, uid: 4000, gid: 1), isHandlerUser: true) == nil)
        for _ in 0..<3 { #expect(ledger.admit(PeerCredentials(pid: 1, uid: 0, gid: 0), isHandlerUser: false) == nil) }
        #expect(ledger.admit(PeerCredentials(pid: 1, uid: 0, gid: 0), isHandlerUser: false)?.contains("max_connections") == true)
        ledger.release(user)
        #expect(ledger.openConnections == 9)
        #expect(ledger.admit(PeerCredentials(pid: 1, uid: 4000, gid: 1), isHandlerUser: true) == nil)
    }

    @Test func unfinishedLinesAreCountedAcrossConnections() {
        let ledger = ConnectionLimits.Ledger(limits: ConnectionLimits(maxConnections: 10, maxUnfinishedLineBytes: 100))
        #expect(ledger.unfinishedLineChanged(from: 0, to: 60))
        #expect(!ledger.unfinishedLineChanged(from: 0, to: 50), "110 of 100")
        #expect(ledger.unfinishedLineChanged(from: 50, to: 0), "giving back is always fine")
        #expect(ledger.unfinishedLineChanged(from: 0, to: 40))
    }

    @Test func theLimitsComeFromTheConfiguration() throws {
        let defaults = try DaemonConfiguration.parse("", file: "t")
        #expect(defaults.maxConnectionsPerUID == 32 && defaults.idleTimeoutSeconds == 60)
        #expect(defaults.maxPackageDepth == 256 && defaults.maxPackageEntries == 100_000)
        #expect(ConnectionLimits(defaults).reservedForHandlers == 32)
        let set = try DaemonConfiguration.parse("""
            max_connections = 20
            max_connections_per_uid = 4
            reserved_handler_connections = 5
            idle_timeout = 9
            max_unfinished_line_bytes = 2097152
            max_package_depth = 12
            max_package_entries = 34
            """, file: "t")
        #expect(ConnectionLimits(set) == ConnectionLimits(maxConnections: 20, maxPerUID: 4, reservedForHandlers: 5, idleTimeout: .seconds(9), maxUnfinishedLineBytes: 2 << 20))
        #expect(set.maxPackageDepth == 12 && set.maxPackageEntries == 34)
        #expect(throws: ConfigurationError.self) { try DaemonConfiguration.parse("max_connections = 8\nreserved_handler_connections = 8\n", file: "t") }
    }
}

/// The in-hand marks of the ledger, so one input cannot crash the daemon twice.
@Suite struct PoisonMarkTests {
    @Test func aMarkLeftByACrashPoisonsAndOneLeftByAKillDoesNot() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let ledger = try Fixtures.ledger(scratch)
        try ledger.markInHand("/drop/Done.rtfd")
        try ledger.clearInHand("/drop/Done.rtfd")
        try ledger.markInHand("/drop/Killed.rtfd")
        // Killed: tried again, nothing poisoned, the interruption counted.
        #expect(try ledger.settleMarks(previousRunCrashed: false).isEmpty)
        try ledger.markInHand("/drop/Crashed.rtfd")
        let poisoned = try ledger.settleMarks(previousRunCrashed: true)
        #expect(Set(poisoned.map(\.sourcePath)) == ["/drop/Killed.rtfd", "/drop/Crashed.rtfd"])
        #expect(poisoned.first { $0.sourcePath == "/drop/Killed.rtfd" }?.interruptions == 2)
        #expect(poisoned.first { $0.sourcePath == "/drop/Crashed.rtfd" }?.interruptions == 1)
        try ledger.clearInHand("/drop/Killed.rtfd")
        try ledger.clearInHand("/drop/Crashed.rtfd")
        #expect(try ledger.settleMarks(previousRunCrashed: true).isEmpty, "set aside and cleared: never again")
    }
}
