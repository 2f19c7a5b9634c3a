@testable import DocRouteDelivery
import DocRouteLedger
import DocRouteTestSupport
import Foundation
import SystemPackage
import Testing

/// Crashes played by stopping a batch after one of its steps, then starting afresh (a new ledger
/// connection, a new batch) and recovering, as the daemon does at start.
@Suite struct DeliveryRecoveryTests {
    let mailbox = "Documents/Inbox/Mail"
    let count = 20

    struct World {
        let scratch: TemporaryFolder
        let container: FilePath
        var inbox: TestInbox

        func content(_ index: Int) -> [UInt8] { Fixtures.content(index, size: 5000 + index) }
        func name(_ index: Int) -> String { "mol-\(index).pdb" }

        /// Where each file is: in the inbox, in the sandbox (under any name, found by content).
        func census(_ count: Int) -> (inbox: [Int], sandbox: [Int: [String]]) {
            var inInbox: [Int] = []
            var inSandbox: [Int: [String]] = [:]
            let sandboxFiles = scratch.list("containers/com.example.viewer/Documents/Inbox/Mail")
            for index in 0..<count {
                if scratch.read("inbox/\(name(index))") == content(index) { inInbox.append(index) }
                for file in sandboxFiles where scratch.read("containers/com.example.viewer/Documents/Inbox/Mail/\(file)") == content(index) {
                    inSandbox[index, default: []].append(file)
                }
            }
            return (inInbox, inSandbox)
        }
    }

    func makeWorld() throws -> World {
        let scratch = try TemporaryFolder()
        let container = try scratch.folder("containers/com.example.viewer")
        let inbox = try TestInbox(scratch.path("inbox"))
        let world = World(scratch: scratch, container: container, inbox: inbox)
        for index in 0..<count { try scratch.write("inbox/\(world.name(index))", world.content(index)) }
        return world
    }

    func requests(_ world: World, names: [String]? = nil) throws -> [DeliveryRequest] {
        try (names ?? (0..<count).map(world.name)).map { try world.inbox.request($0, container: world.container) }
    }

    /// Delivers `name` up to its commit and stops there, as a crash would: its source stays.
    func committedAndStopped(_ world: World, _ name: String, ledger: DeliveryLedger) throws -> DeliveryRequest {
        let request = try requests(world, names: [name])[0]
        _ = DeliveryBatch(ledger: ledger, logger: Fixtures.logger).deliver([request], stoppingAfter: .commit)
        world.inbox.close()
        return request
    }

    @Test(arguments: [DeliveryBatch.Step.copy, .sync, .stage, .place, .commit])
    func aCrashAfterAnyStepLosesAndDuplicatesNothing(step: DeliveryBatch.Step) throws {
        var world = try makeWorld()
        defer { world.scratch.remove() }
        let crashed = DeliveryBatch(ledger: try Fixtures.ledger(world.scratch), logger: Fixtures.logger)
        _ = crashed.deliver(try requests(world), stoppingAfter: step)
        world.inbox.close()

        // The next start.
        let ledger = try Fixtures.ledger(world.scratch)
        let batch = DeliveryBatch(ledger: ledger, logger: Fixtures.logger)
        let report = try batch.recover(containerRoots: [world.container])

        let placedBeforeCrash = step >= .stage
        #expect(report.committed.count == (placedBeforeCrash && step < .commit ? count : 0))
        #expect(report.temporariesRemoved == (placedBeforeCrash ? 0 : count))
        #expect(report.sourcesRemoved == (placedBeforeCrash ? count : 0))
        let (inInbox, inSandbox) = world.census(count)
        #expect(world.scratch.list("containers/com.example.viewer/\(mailbox)").filter { $0.hasPrefix(".") } == [])
        for index in 0..<count {
            let places = inInbox.filter { $0 == index }.count + (inSandbox[index]?.count ?? 0)
            #expect(places == 1, "file \(index) is in \(places) places")
        }

        // The intake then delivers what is still in the inbox; nothing may arrive twice.
        world.inbox = try TestInbox(world.scratch.path("inbox"))
        defer { world.inbox.close() }
        let left = world.scratch.list("inbox")
        let outcomes = batch.deliver(try requests(world, names: left))
        #expect(outcomes.compactMap(\.error).map(\.description) == [])
        let (finalInbox, finalSandbox) = world.census(count)
        #expect(finalInbox == [])
        #expect((0..<count).map { finalSandbox[$0] ?? [] } == (0..<count).map { [world.name($0)] })
        let pending = try ledger.pending(bundleIdentifier: "com.example.viewer", limit: 100)
        #expect(pending.count == count)
        #expect(Set(pending.compactMap(\.finalPath)).count == count)
        #expect(pending.map(\.sequence) == pending.map(\.sequence).sorted())
    }

    /// A handler took a staged copy's final name before the restart: recovery renames the copy
    /// to the next free name and records that name.
    @Test func recoveryPicksTheNextNameWhenTheFinalNameWasTaken() throws {
        let world = try makeWorld()
        defer { world.scratch.remove() }
        _ = DeliveryBatch(ledger: try Fixtures.ledger(world.scratch), logger: Fixtures.logger)
            .deliver(try requests(world, names: [world.name(0)]), stoppingAfter: .stage)
        world.inbox.close()
        try world.scratch.write("containers/com.example.viewer/\(mailbox)/mol-0.pdb", "the handler's own")

        let ledger = try Fixtures.ledger(world.scratch)
        let report = try DeliveryBatch(ledger: ledger, logger: Fixtures.logger).recover(containerRoots: [world.container])

        #expect(report.committed.map { $0.finalPath.map { FilePath($0).lastComponent!.string } } == ["mol-0-1.pdb"])
        let sameBytes = world.scratch.read("containers/com.example.viewer/\(mailbox)/mol-0-1.pdb") == world.content(0)
        #expect(sameBytes)
        #expect(world.scratch.read("containers/com.example.viewer/\(mailbox)/mol-0.pdb") == Array("the handler's own".utf8))
        #expect(try ledger.pending(bundleIdentifier: "com.example.viewer").map(\.finalPath) == report.committed.map(\.finalPath))
        #expect(world.scratch.list("inbox") == (1..<count).map(world.name).sorted())
    }

    /// The handler deleted a staged temporary (it owns the folder): the row is dropped and the
    /// source, still in the inbox, is delivered again.
    @Test func aStagedCopyThatVanishedIsDeliveredAgain() throws {
        let world = try makeWorld()
        defer { world.scratch.remove() }
        _ = DeliveryBatch(ledger: try Fixtures.ledger(world.scratch), logger: Fixtures.logger)
            .deliver(try requests(world, names: [world.name(0)]), stoppingAfter: .stage)
        world.inbox.close()
        for name in world.scratch.list("containers/com.example.viewer/\(mailbox)") {
            try FileManager.default.removeItem(atPath: world.container.appending("\(mailbox)/\(name)").string)
        }
        // Someone else's file now has the final name: it must not be mistaken for the copy.
        try world.scratch.write("containers/com.example.viewer/\(mailbox)/mol-0.pdb", String(repeating: "x", count: 5000))

        let ledger = try Fixtures.ledger(world.scratch)
        let report = try DeliveryBatch(ledger: ledger, logger: Fixtures.logger).recover(containerRoots: [world.container])

        #expect(report.committed.isEmpty)
        #expect(report.discarded.count == 1)
        #expect(try ledger.pendingCount(bundleIdentifier: "com.example.viewer") == 0)
        #expect(try ledger.stagedRecords().isEmpty)
        #expect(world.scratch.list("inbox").contains(world.name(0)))
    }

    /// After a crash between commit and removal, a rescan that sees the source before recovery
    /// ran can tell it was delivered already.
    @Test func aCommittedSourceIsFoundByItsIdentity() throws {
        let world = try makeWorld()
        defer { world.scratch.remove() }
        let ledger = try Fixtures.ledger(world.scratch)
        let request = try committedAndStopped(world, world.name(3), ledger: ledger)
        let status = request.sourceStatus

        let found = try ledger.findDelivered(
            sourceDevice: status.device, sourceInode: status.inode, sourceSize: status.size,
            sourceMtimeNs: status.modificationTimeNanoseconds, sourcePath: request.sourceFilePath)
        #expect(found?.deliveryID == request.deliveryID)
        #expect(found?.state == .committed)
        #expect(try ledger.findDelivered(
            sourceDevice: status.device, sourceInode: status.inode, sourceSize: status.size,
            sourceMtimeNs: status.modificationTimeNanoseconds + 1, sourcePath: request.sourceFilePath) == nil)
        #expect(try ledger.findDelivered(
            sourceDevice: status.device, sourceInode: status.inode, sourceSize: status.size,
            sourceMtimeNs: status.modificationTimeNanoseconds, sourcePath: world.inbox.path.appending("other.pdb")) == nil)

        // Once the source is confirmed removed, a file seen there later is a new one.
        _ = try DeliveryBatch(ledger: ledger, logger: Fixtures.logger).recover(containerRoots: [world.container])
        #expect(try ledger.findDelivered(
            sourceDevice: status.device, sourceInode: status.inode, sourceSize: status.size,
            sourceMtimeNs: status.modificationTimeNanoseconds, sourcePath: request.sourceFilePath) == nil)
    }

    /// A source rewritten in place after its delivery committed is a new document: recovery
    /// leaves it for the intake instead of removing it.
    @Test func aSourceRewrittenAfterCommitIsKept() throws {
        let world = try makeWorld()
        defer { world.scratch.remove() }
        let ledger = try Fixtures.ledger(world.scratch)
        _ = DeliveryBatch(ledger: ledger, logger: Fixtures.logger)
            .deliver(try requests(world, names: [world.name(5)]), stoppingAfter: .commit)
        world.inbox.close()
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: world.scratch.path("inbox/mol-5.pdb").string))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("more".utf8))
        try handle.close()

        let report = try DeliveryBatch(ledger: ledger, logger: Fixtures.logger).recover(containerRoots: [world.container])

        #expect(report.sourcesRemoved == 0)
        #expect(world.scratch.list("inbox").contains("mol-5.pdb"))
        #expect(try ledger.recordsWithSourcesKept().isEmpty)
    }

    /// An inbox with no reclaim folder on its file system has a delivered source renamed to a
    /// hidden name of its delivery, checked, then removed. A crash in between leaves that name:
    /// recovery removes the source itself, and puts back a file that is not it (a sender renamed
    /// it over the source's name after the copy) under its name, where intake sees it.
    @Test(arguments: [true, false])
    func whatACrashLeftUnderTheHiddenRemovingNameIsSettled(theSourceItself: Bool) throws {
        let world = try makeWorld()
        defer { world.scratch.remove() }
        let ledger = try Fixtures.ledger(world.scratch)
        let request = try committedAndStopped(world, world.name(3), ledger: ledger)
        let aside = "inbox/\(SourceReclaimer.removingName(request.deliveryID).string)"
        if theSourceItself {
            #expect(rename(world.scratch.path("inbox/mol-3.pdb").string, world.scratch.path(aside).string) == 0)
        } else {
            #expect(unlink(world.scratch.path("inbox/mol-3.pdb").string) == 0)
            try world.scratch.write(aside, "the sender's new mol-3.pdb")
        }

        let report = try DeliveryBatch(ledger: ledger, logger: Fixtures.logger).recover(containerRoots: [world.container])

        #expect(report.sourcesRemoved == (theSourceItself ? 1 : 0))
        #expect(!world.scratch.list("inbox").contains { $0.hasPrefix(".docroute-removing-") })
        #expect(world.scratch.read("inbox/mol-3.pdb") == (theSourceItself ? nil : Array("the sender's new mol-3.pdb".utf8)))
        #expect(try ledger.recordsWithSourcesKept().isEmpty)
    }
}
