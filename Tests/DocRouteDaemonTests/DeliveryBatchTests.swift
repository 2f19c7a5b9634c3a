@testable import DocRouteDelivery
@testable import DocRouteIntake
@testable import DocRouteOperations
import DocRouteTestSupport
import Foundation
import SystemPackage
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct DeliveryBatchTests {
    let mailbox = "Documents/Inbox/Mail"

    /// How most of these tests start: a scratch folder with the viewer's container and an open
    /// inbox. The caller closes the inbox, then removes the folder.
    static func viewerScene() throws -> (scratch: TemporaryFolder, container: FilePath, inbox: TestInbox) {
        let scratch = try TemporaryFolder()
        do {
            return (scratch, try scratch.folder("containers/com.example.viewer"), try TestInbox(scratch.path("inbox")))
        } catch {
            scratch.remove()
            throw error
        }
    }

    @Test func twoHundredSmallFilesArriveWholeInOrderAndLeaveTheInbox() throws {
        let (scratch, container, inbox) = try Self.viewerScene()
        defer { inbox.close(); scratch.remove() }
        var names: [String] = []
        for index in 0..<200 {
            let name = String(format: "file-%03d.pdb", index)
            names.append(name)
            try scratch.write("inbox/\(name)", Fixtures.content(index, size: 100 + index * 37))
        }
        try scratch.write("inbox/abc.txt", "abc")
        names.append("abc.txt")
        let requests = try names.map { try inbox.request($0, container: container) }
        let ledger = try Fixtures.ledger(scratch)
        let batch = DeliveryBatch(ledger: ledger, logger: Fixtures.logger)

        let outcomes = batch.deliver(requests)

        #expect(outcomes.compactMap(\.error).map(\.description) == [])
        #expect(scratch.list("containers/com.example.viewer/\(mailbox)") == names.sorted())
        for (index, name) in names.dropLast().enumerated() {
            let sameBytes = scratch.read("containers/com.example.viewer/\(mailbox)/\(name)") == Fixtures.content(index, size: 100 + index * 37)
            #expect(sameBytes, "\(name) differs")
        }
        #expect(scratch.list("inbox") == [])
        // SHA-256 of "abc" (FIPS 180-2 example).
        #expect(outcomes.last?.record?.sha256 == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")

        let pending = try ledger.pending(bundleIdentifier: "com.example.viewer", limit: 1000)
        #expect(pending.map(\.originalName) == names)
        #expect(pending.map(\.sequence) == Array(1...201))
        #expect(pending.allSatisfy { $0.state == .committed && $0.temporaryPath == nil && $0.sourceRemovedAt != nil })
        #expect(pending.map(\.finalPath) == names.map { container.appending(mailbox).appending($0).string })
        #expect(pending.map(\.deliveryID) == requests.map(\.deliveryID))
        #expect(pending[1].annotation == #"{"mailbox":"Mail","originalFilename":"file-001.pdb","size":137}"#)
        #expect(pending[1].size == 137)
        #expect(pending[1].eventURL == "file://" + container.appending(mailbox).appending("file-001.pdb").string)
        #expect(try ledger.pendingCount(bundleIdentifier: "com.example.viewer") == 201)
    }

    @Test(arguments: [
        DeliveryBatch.Options(dataSync: .fileSystem, copyMethod: .copyFileRange),
        DeliveryBatch.Options(dataSync: .fileSystem, copyMethod: .readWrite),
        DeliveryBatch.Options(dataSync: .fileSystem, copyMethod: .automatic(threshold: 65_536)),
        DeliveryBatch.Options(dataSync: .eachFile, copyMethod: .readWrite),
        DeliveryBatch.Options(dataSync: .eachFile, copyMethod: .copyFileRange, bufferSize: 1),
    ])
    func everyCopyAndSyncMethodDeliversTheSameBytes(options: DeliveryBatch.Options) throws {
        let (scratch, container, inbox) = try Self.viewerScene()
        defer { inbox.close(); scratch.remove() }
        let sizes = [0, 1, 4096, 65_535, 65_536, 65_537, 1_000_000]
        for (index, size) in sizes.enumerated() { try scratch.write("inbox/f\(index).bin", Fixtures.content(index, size: size)) }
        try scratch.write("inbox/abc.txt", "abc")
        let batch = DeliveryBatch(ledger: try Fixtures.ledger(scratch), options: options, logger: Fixtures.logger)

        let outcomes = batch.deliver(try (sizes.indices.map { "f\($0).bin" } + ["abc.txt"]).map { try inbox.request($0, container: container) })

        #expect(outcomes.compactMap(\.error).map(\.description) == [])
        for (index, size) in sizes.enumerated() {
            let sameBytes = scratch.read("containers/com.example.viewer/\(mailbox)/f\(index).bin") == Fixtures.content(index, size: size)
            #expect(sameBytes, "f\(index).bin (\(size) bytes) differs")
        }
        #expect(outcomes[0].record?.sha256 == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(outcomes.last?.record?.sha256 == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    /// From 16 MiB on, a second thread hashes the copy while the kernel writes it: the digest
    /// must still be that of the whole copy, whichever way the bytes went.
    @Test(arguments: [SandboxWriter.CopyMethod.copyFileRange, .default, .readWrite])
    func aLargeFileHashedWhileItIsCopiedHasTheDigestOfItsBytes(method: SandboxWriter.CopyMethod) throws {
        let (scratch, container, inbox) = try Self.viewerScene()
        defer { inbox.close(); scratch.remove() }
        let size = Int(SandboxWriter.followingHashThreshold) + 8_388_609
        let content = Fixtures.content(7, size: size)
        try scratch.write("inbox/large.bin", content)
        let batch = DeliveryBatch(ledger: try Fixtures.ledger(scratch), options: .init(copyMethod: method), logger: Fixtures.logger)

        let outcome = batch.deliver([try inbox.request("large.bin", container: container)])[0]

        #expect(outcome.error == nil)
        let delivered = scratch.path("containers/com.example.viewer/\(mailbox)/large.bin").string
        #expect(scratch.read("containers/com.example.viewer/\(mailbox)/large.bin") == content)
        #expect(outcome.record?.sha256 == (try CopyHashFollowerTests.sha256sum(delivered)))
    }

    /// A copy from 16 MiB on is made durable by its own fsync as soon as it is complete (its
    /// write-back started while it was copied), so the batch's syncfs need not wait for it; a
    /// small one waits for the batch's. Either way the bytes are the source's.
    /// Temporaries are named from random bytes taken 64 names at a time: hidden names of the
    /// form `.docroute-<16 hex digits>.tmp`, none repeated, another run's not the same.
    @Test func temporaryNamesAreHiddenRandomAndNeverRepeated() {
        var names = SandboxWriter.TemporaryNames()
        let drawn = (0..<1000).map { _ in names.next() }
        #expect(Set(drawn).count == drawn.count)
        for name in drawn {
            #expect(name.hasPrefix(SandboxWriter.temporaryPrefix) && name.hasSuffix(SandboxWriter.temporarySuffix), "\(name)")
            let random = name.dropFirst(SandboxWriter.temporaryPrefix.count).dropLast(SandboxWriter.temporarySuffix.count)
            #expect(random.count == 16 && random.allSatisfy { $0.isHexDigit && !$0.isUppercase }, "\(name)")
        }
        var other = SandboxWriter.TemporaryNames()
        #expect(Set((0..<64).map { _ in other.next() }).isDisjoint(with: drawn))
    }

    /// The hand-over leaves out the change of mode only when the copy has ``SandboxWriter/fileMode``
    /// already: a copy a umask left with fewer bits (here 0400) is still given 0600. (That the
    /// change is left out is seen in the burst's system-call count, not here: a file's ctime
    /// moves in clock ticks, too coarse to tell.)
    @Test func aCopyIsGivenTheFileModeUnlessItHasItAlready() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let writer = SandboxWriter()
        for created in [mode_t(0o600), 0o400] {
            let path = scratch.path("copy-\(String(created, radix: 8))").string
            let descriptor = try FileDescriptor.open(FilePath(path), .readWrite, options: [.create, .exclusiveCreate],
                                                     permissions: FilePermissions(rawValue: 0o600))
            defer { try? descriptor.close() }
            #expect(fchmod(descriptor.rawValue, created) == 0)
            let before = try descriptor.status()
            try writer.handOver(descriptor, owner: nil, describing: path, mode: mode_t(before.mode))
            let after = try descriptor.status()
            #expect(after.mode & 0o7777 == 0o600, "created \(String(created, radix: 8))")
        }
    }

    @Test func aLargeCopyIsSyncedByItselfAndASmallOneByTheBatch() throws {
        let (scratch, container, inbox) = try Self.viewerScene()
        defer { inbox.close(); scratch.remove() }
        let writer = SandboxWriter()
        let folder = try writer.openFolder(root: container, components: ["Documents"], owner: nil, create: true)
        defer { folder.close() }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 4096)
        defer { buffer.deallocate() }
        let large = Int(SandboxWriter.followingHashThreshold)
        var names = SandboxWriter.TemporaryNames()
        for (name, size, synced) in [("small.bin", 4096, false), ("below.bin", large - 1, false), ("large.bin", large, true)] {
            let content = Fixtures.content(size, size: size)
            try scratch.write("inbox/\(name)", content)
            let request = try inbox.request(name, container: container)

            let copy = try writer.copyToTemporary(from: request.sourceDescriptor, expected: request.sourceStatus, describing: name,
                                                  into: folder, owner: nil, buffer: buffer, names: &names)

            #expect(copy.isSynced == synced, "\(name)")
            #expect(copy.size == Int64(size))
            #expect(scratch.read("containers/com.example.viewer/Documents/\(copy.name)") == content, "\(name)")
        }
    }

    /// The intake copies a batch while the one before it commits: a file in both (seen twice)
    /// is delivered by the first, and the second drops its copy and removes nothing twice, whether
    /// the first removed the source or renamed it aside to be reclaimed, and whether the first
    /// batch's sources left their inbox before the second committed or only after (they leave on
    /// a thread of their own).
    @Test(arguments: [false, true], [false, true])
    func aFileInTwoOverlappingBatchesIsDeliveredOnce(reclaiming: Bool, firstLeavesFirst: Bool) throws {
        let (scratch, container, inbox) = try Self.viewerScene()
        defer { inbox.close(); scratch.remove() }
        for name in ["a.pdb", "both.pdb", "c.pdb"] { try scratch.write("inbox/\(name)", Array(name.utf8)) }
        let ledger = try Fixtures.ledger(scratch)
        // Wired as the daemon wires it: the reclaimer notes the removals in the ledger.
        let reclaimer = SourceReclaimer(logger: Fixtures.logger) { ids in try ledger.markSourcesRemoved(ids, durably: true) }
        if reclaiming { try reclaimer.open(stateDirectory: scratch.path("state")) }
        let batch = DeliveryBatch(ledger: ledger, reclaimer: reclaimer, logger: Fixtures.logger)

        let first = batch.prepare([try inbox.request("a.pdb", container: container), try inbox.request("both.pdb", container: container)])
        let second = batch.prepare([try inbox.request("both.pdb", container: container), try inbox.request("c.pdb", container: container)])
        var firstOutcomes: [DeliveryBatch.Outcome] = []
        var secondOutcomes: [DeliveryBatch.Outcome] = []
        let firstRemoval = batch.complete(first) { firstOutcomes = $0 }
        if firstLeavesFirst { firstRemoval.run() }
        let secondRemoval = batch.complete(second) { secondOutcomes = $0 }
        if !firstLeavesFirst { firstRemoval.run() }
        secondRemoval.run()

        #expect(firstOutcomes.map { $0.record?.originalName } == ["a.pdb", "both.pdb"])
        guard case .alreadyDelivered(let earlier) = secondOutcomes[0] else {
            Issue.record("expected alreadyDelivered, got \(secondOutcomes[0])")
            return
        }
        #expect(earlier.deliveryID == firstOutcomes[1].record?.deliveryID)
        #expect(secondOutcomes[1].record?.originalName == "c.pdb")
        #expect(scratch.list("containers/com.example.viewer/\(mailbox)") == ["a.pdb", "both.pdb", "c.pdb"])
        #expect(scratch.list("inbox") == [])
        #expect(try ledger.pending(bundleIdentifier: "com.example.viewer", limit: 10).map(\.originalName) == ["a.pdb", "both.pdb", "c.pdb"])
        #expect(reclaimer.pending == (reclaiming ? 3 : 0))
        // The second batch found the shared source gone and left its note to whoever took it out:
        // the first batch (removed, noted after the folder sync) or the reclaimer (after its syncfs).
        let both = try #require(try ledger.record(deliveryID: earlier.deliveryID))
        #expect((both.sourceRemovedAt == nil) == reclaiming)
        if reclaiming {
            #expect(reclaimer.reclaimAll() == 3)
            #expect(try ledger.record(deliveryID: earlier.deliveryID)?.sourceRemovedAt != nil)
        }
    }

    /// A crash between commit and the source's removal left the source in its inbox; the intake
    /// offers it again before any recovery ran: it is removed, not delivered a second time.
    @Test func aSourceDeliveredBeforeIsRemovedNotDeliveredAgain() throws {
        let (scratch, container, inbox) = try Self.viewerScene()
        defer { inbox.close(); scratch.remove() }
        try scratch.write("inbox/1abc.pdb", "pdb")
        try scratch.write("inbox/new.pdb", "new")
        let ledger = try Fixtures.ledger(scratch)
        let first = try inbox.request("1abc.pdb", container: container)
        _ = DeliveryBatch(ledger: ledger, logger: Fixtures.logger).deliver([first], stoppingAfter: .commit)
        #expect(scratch.list("inbox") == ["1abc.pdb", "new.pdb"])

        let outcomes = DeliveryBatch(ledger: ledger, logger: Fixtures.logger).deliver([
            try inbox.request("1abc.pdb", container: container),
            try inbox.request("new.pdb", container: container),
        ])

        guard case .alreadyDelivered(let earlier) = outcomes[0] else {
            Issue.record("expected alreadyDelivered, got \(outcomes[0])")
            return
        }
        #expect(earlier.deliveryID == first.deliveryID)
        #expect(outcomes[1].record != nil)
        #expect(scratch.list("inbox") == [])
        #expect(scratch.list("containers/com.example.viewer/\(mailbox)") == ["1abc.pdb", "new.pdb"])
        #expect(try ledger.pendingCount(bundleIdentifier: "com.example.viewer") == 2)
        #expect(try ledger.recordsWithSourcesKept().isEmpty)

        // Dropped again later (same name, same times, maybe the same inode): a new delivery.
        try scratch.write("inbox/1abc.pdb", "pdb")
        let again = DeliveryBatch(ledger: ledger, logger: Fixtures.logger).deliver([try inbox.request("1abc.pdb", container: container)])
        #expect(again.first?.record?.finalPath == container.appending("\(mailbox)/1abc-1.pdb").string)
    }

    @Test func filesAreReadableByTheirHandlerOnly() throws {
        let (scratch, container, inbox) = try Self.viewerScene()
        defer { inbox.close(); scratch.remove() }
        try scratch.write("inbox/a.txt", "a")
        let batch = DeliveryBatch(ledger: try Fixtures.ledger(scratch), logger: Fixtures.logger)
        var request = try inbox.request("a.txt", container: container)
        let owner = SandboxWriter.Owner(userID: 4242, groupID: 4343)
        request.owner = (owner.userID, owner.groupID)
        #expect(batch.deliver([request]).first?.error == nil)

        var status = stat()
        #expect(stat(container.appending("\(mailbox)/a.txt").string, &status) == 0)
        // The handler's alone: no group (the admin group may hold the mail agent), no others.
        #expect(status.st_mode & 0o777 == 0o600)
        if geteuid() == 0 {
            #expect((status.st_uid, status.st_gid) == (4242, 4343))
            for folder in ["Documents", "Documents/Inbox", mailbox] {
                #expect(stat(container.appending(folder).string, &status) == 0)
                #expect((status.st_uid, status.st_gid) == (4242, 4343), "\(folder) not given to the handler")
                #expect(status.st_mode & 0o777 == 0o700, "\(folder)")
            }
        }
    }

    /// A handler replaced a folder of its sandbox with a link to somewhere else: nothing is
    /// written there, the error says so, and the other handler's file in the batch arrives.
    @Test(arguments: ["Documents", "Documents/Inbox", "Documents/Inbox/Mail"])
    func aSymbolicLinkInTheSandboxIsRefused(replaced: String) throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let evil = try scratch.folder("containers/com.example.evil")
        let good = try scratch.folder("containers/com.example.good")
        let elsewhere = try scratch.folder("elsewhere")
        try scratch.folder("containers/com.example.evil/" + replaced.split(separator: "/").dropLast().joined(separator: "/"))
        try FileManager.default.createSymbolicLink(atPath: evil.appending(replaced).string, withDestinationPath: elsewhere.string)
        try scratch.folder("elsewhere/Inbox/Mail")
        try scratch.folder("elsewhere/Mail")
        let inbox = try TestInbox(scratch.path("inbox"))
        defer { inbox.close() }
        try scratch.write("inbox/one.pdb", "one")
        try scratch.write("inbox/two.pdb", "two")
        try scratch.write("inbox/three.pdb", "three")
        let ledger = try Fixtures.ledger(scratch)
        let batch = DeliveryBatch(ledger: ledger, logger: Fixtures.logger)

        let outcomes = batch.deliver([
            try inbox.request("one.pdb", container: evil, bundle: "com.example.evil"),
            try inbox.request("two.pdb", container: good, bundle: "com.example.good"),
            try inbox.request("three.pdb", container: evil, bundle: "com.example.evil"),
        ])

        #expect(outcomes.map { $0.error?.code } == [.symbolicLink, nil, .symbolicLink])
        #expect(outcomes[0].error?.message.hasPrefix(evil.appending(replaced).string + " ") == true)
        #expect(outcomes[0].error?.message.contains("symbolic link") == true)
        #expect(scratch.allFiles("elsewhere") == [])
        #expect(scratch.read("containers/com.example.good/\(mailbox)/two.pdb") == Array("two".utf8))
        #expect(scratch.list("inbox") == ["one.pdb", "three.pdb"])
        #expect(try ledger.pendingCount(bundleIdentifier: "com.example.evil") == 0)
    }

    @Test func takenNamesGetACounterBeforeTheChain() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let container = try scratch.folder("containers/com.example.viewer")
        try scratch.write("containers/com.example.viewer/\(mailbox)/1abc.pdb", "already there")
        try scratch.write("containers/com.example.viewer/\(mailbox)/1abc-2.pdb", "also there")
        let inbox = try TestInbox(scratch.path("inbox"))
        defer { inbox.close() }
        try scratch.folder("inbox/a")
        try scratch.folder("inbox/b")
        try scratch.write("inbox/1abc.pdb", "first")
        try scratch.write("inbox/1abc.pdb.gz", "gz")
        let inboxA = try TestInbox(scratch.path("inbox/a"))
        let inboxB = try TestInbox(scratch.path("inbox/b"))
        defer { inboxA.close(); inboxB.close() }
        try scratch.write("inbox/a/1abc.pdb", "second")
        try scratch.write("inbox/b/1abc.pdb", "third")
        try scratch.write("containers/com.example.viewer/\(mailbox)/1abc.pdb.gz", "old gz")
        let batch = DeliveryBatch(ledger: try Fixtures.ledger(scratch), logger: Fixtures.logger)

        let outcomes = batch.deliver([
            try inbox.request("1abc.pdb", container: container),
            try inboxA.request("1abc.pdb", container: container),
            try inbox.request("1abc.pdb.gz", container: container, chain: ".pdb.gz"),
            try inboxB.request("1abc.pdb", container: container),
        ])

        #expect(outcomes.map { $0.record.flatMap { $0.finalPath.map { FilePath($0).lastComponent!.string } } }
                == ["1abc-1.pdb", "1abc-3.pdb", "1abc-1.pdb.gz", "1abc-4.pdb"])
        #expect(scratch.read("containers/com.example.viewer/\(mailbox)/1abc.pdb") == Array("already there".utf8))
        #expect(scratch.read("containers/com.example.viewer/\(mailbox)/1abc-3.pdb") == Array("second".utf8))
        #expect(scratch.read("containers/com.example.viewer/\(mailbox)/1abc-4.pdb") == Array("third".utf8))
    }

    /// The handler creates a file under the chosen name after the rows were staged and before
    /// the rename: the copy takes the next name, the ledger says so, the handler's file is intact.
    @Test func aNameTakenBetweenNamingAndRenameGetsTheNextCounter() throws {
        let (scratch, container, inbox) = try Self.viewerScene()
        defer { inbox.close(); scratch.remove() }
        try scratch.write("inbox/1abc.pdb", "ours")
        let ledger = try Fixtures.ledger(scratch)
        let batch = DeliveryBatch(ledger: ledger, logger: Fixtures.logger)

        let outcomes = batch.deliver([try inbox.request("1abc.pdb", container: container)], stoppingAfter: nil) {
            try? scratch.write("containers/com.example.viewer/\(mailbox)/1abc.pdb", "the handler's")
            try? scratch.write("containers/com.example.viewer/\(mailbox)/1abc-1.pdb", "the handler's too")
        }

        let record = try #require(outcomes.first?.record)
        #expect(record.finalPath == container.appending("\(mailbox)/1abc-2.pdb").string)
        #expect(try ledger.record(deliveryID: record.deliveryID)?.finalPath == record.finalPath)
        #expect(scratch.read("containers/com.example.viewer/\(mailbox)/1abc.pdb") == Array("the handler's".utf8))
        #expect(scratch.read("containers/com.example.viewer/\(mailbox)/1abc-2.pdb") == Array("ours".utf8))
        #expect(scratch.list(mailbox.isEmpty ? "" : "containers/com.example.viewer/\(mailbox)").count == 3)
    }

    /// The intake has the source open; someone removes its name before delivery. The open
    /// descriptor still holds every byte, so it is delivered whole.
    @Test func aSourceRemovedAfterOpeningIsStillDeliveredWhole() throws {
        let (scratch, container, inbox) = try Self.viewerScene()
        defer { inbox.close(); scratch.remove() }
        try scratch.write("inbox/gone.bin", Fixtures.content(1, size: 300_000))
        let request = try inbox.request("gone.bin", container: container)
        try FileManager.default.removeItem(atPath: scratch.path("inbox/gone.bin").string)
        let batch = DeliveryBatch(ledger: try Fixtures.ledger(scratch), logger: Fixtures.logger)

        let outcome = try #require(batch.deliver([request]).first)

        #expect(outcome.error == nil)
        let sameBytes = scratch.read("containers/com.example.viewer/\(mailbox)/gone.bin") == Fixtures.content(1, size: 300_000)
        #expect(sameBytes)
        #expect(outcome.record?.size == 300_000)
    }

    /// A source that shrinks or grows between opening and the end of its copy is still being
    /// written: it is not delivered (no partial copy, no temporary left) and stays in the inbox,
    /// to be delivered once the writer closes it.
    @Test(arguments: [-1000, 1000])
    func aSourceChangingDuringTheCopyIsNotDelivered(delta: Int) throws {
        let (scratch, container, inbox) = try Self.viewerScene()
        defer { inbox.close(); scratch.remove() }
        try scratch.write("inbox/growing.bin", Fixtures.content(2, size: 500_000))
        try scratch.write("inbox/steady.bin", "steady")
        let requests = [try inbox.request("growing.bin", container: container), try inbox.request("steady.bin", container: container)]
        #expect(truncate(scratch.path("inbox/growing.bin").string, off_t(500_000 + delta)) == 0)
        let batch = DeliveryBatch(ledger: try Fixtures.ledger(scratch), logger: Fixtures.logger)

        let outcomes = batch.deliver(requests)

        #expect(outcomes.map { $0.error?.code } == [.changed, nil])
        #expect(scratch.list("containers/com.example.viewer/\(mailbox)") == ["steady.bin"])
        #expect(scratch.list("inbox") == ["growing.bin"])
    }

    /// A request carries intake's opened file, and intake refuses a folder when it opens it: no
    /// request for one reaches a batch (the batch checks the status it is given again).
    @Test func aFolderIsNotDelivered() throws {
        let (scratch, container, inbox) = try Self.viewerScene()
        defer { inbox.close(); scratch.remove() }
        try scratch.folder("inbox/sub.pdb")
        #expect(throws: IntakeFile.Refusal.directory) { try inbox.request("sub.pdb", container: container) }
        #expect(scratch.list("containers/com.example.viewer/\(mailbox)") == [])
    }

    @Test func aSourceNameThatIsNotUTF8IsDeliveredAndRemoved() throws {
        let (scratch, container, inbox) = try Self.viewerScene()
        defer { inbox.close(); scratch.remove() }
        // "café.txt" in Latin-1.
        let raw: [CChar] = [0x63, 0x61, 0x66, CChar(bitPattern: 0xE9), 0x2E, 0x74, 0x78, 0x74, 0]
        let component = try #require(FilePath.Component(platformString: raw))
        let descriptor = try inbox.directory.open(component, flags: O_WRONLY | O_CREAT | O_EXCL, permissions: 0o644)
        try Array("menu".utf8).withUnsafeBytes { buffer in try descriptor.writeAll(from: buffer) }
        descriptor.closeIgnoringErrors()
        let ledger = try Fixtures.ledger(scratch)

        let outcome = DeliveryBatch(ledger: ledger, logger: Fixtures.logger)
            .deliver([try inbox.request(component: component, container: container, chain: ".txt")])

        #expect(outcome.first?.error == nil)
        #expect(scratch.read("containers/com.example.viewer/\(mailbox)/caf\u{FFFD}.txt") == Array("menu".utf8))
        #expect(scratch.list("inbox") == [])
        // The source is removed by its raw name in its folder; the ledger keeps the path intake
        // gives, a String, in which the byte that is not UTF-8 reads U+FFFD.
        let recorded = FilePath(inbox.path.appending(component).string)
        #expect(outcome.first?.record?.sourcePath == recorded)
        #expect(try ledger.pending(bundleIdentifier: "com.example.viewer").first?.sourcePath == recorded)
    }

    @Test func mailAnnotationsKeepTheirEntries() throws {
        let (scratch, container, inbox) = try Self.viewerScene()
        defer { inbox.close(); scratch.remove() }
        try scratch.write("inbox/1abc.pdb", "pdb")
        let extra = #"{"from":"brad@sunsetlakesoftware.com","subject":"A \"molecule\"","messageID":"<1@x>","size":"wrong"}"#
        let outcome = DeliveryBatch(ledger: try Fixtures.ledger(scratch), logger: Fixtures.logger)
            .deliver([try inbox.request("1abc.pdb", container: container, annotation: extra)])
        let annotation = try #require(outcome.first?.record?.annotation)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(annotation.utf8)) as? [String: Any])
        #expect(object["from"] as? String == "brad@sunsetlakesoftware.com")
        #expect(object["subject"] as? String == "A \"molecule\"")
        #expect(object["mailbox"] as? String == "Mail")
        #expect(object["originalFilename"] as? String == "1abc.pdb")
        #expect(object["size"] as? Int == 3)
    }

    // Filling a real file system without root is not something a test should do.
    @Test(.enabled(if: geteuid() == 0, "needs root to mount a 1 MiB tmpfs"))
    func aFullDiskFailsOnlyTheFileThatDoesNotFit() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let container = try scratch.folder("small")
        guard mount("tmpfs", container.string, "tmpfs", 0, "size=1m") == 0 else {
            Issue.record("cannot mount a tmpfs as root: errno \(errno)")
            return
        }
        defer { umount(container.string) }
        let inbox = try TestInbox(scratch.path("inbox"))
        defer { inbox.close() }
        try scratch.write("inbox/big.bin", Fixtures.content(3, size: 2 << 20))
        try scratch.write("inbox/small.bin", "fits")

        let outcomes = DeliveryBatch(ledger: try Fixtures.ledger(scratch), logger: Fixtures.logger).deliver([
            try inbox.request("big.bin", container: container),
            try inbox.request("small.bin", container: container),
        ])

        #expect(outcomes.map { $0.error?.code } == [.noSpace, nil])
        #expect(outcomes[0].error?.message.contains("Free space") == true)
        #expect(scratch.list("small/\(mailbox)") == ["small.bin"])
        #expect(scratch.list("inbox") == ["big.bin"])
    }
}
