@testable import DocRouteDelivery
import DocRoutePlatform
import DocRouteTestSupport
import Foundation
import SystemPackage
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Package documents delivered whole, and crashes at every step of one.
@Suite struct PackageDeliveryTests {
    static let sandbox = "containers/com.example.editor/Documents/Inbox/Mail"
    static let files: [String: [UInt8]] = [
        "TXT.rtf": Array("{\\rtf1 hello}\n".utf8),
        "image.png": Fixtures.content(1, size: 70_000),
        "Pictures/inner/deep.txt": Array("deep\n".utf8),
    ]

    func makePackage(_ scratch: TemporaryFolder, _ name: String = "Report.rtfd") throws {
        for (path, bytes) in Self.files { try scratch.write("inbox/\(name)/\(path)", bytes) }
        try scratch.folder("inbox/\(name)/Empty")
    }

    /// Runs `body` on a scratch tree holding the handler's container and `Report.rtfd` in its
    /// inbox (``makePackage(_:_:)``), with the inbox open; both go afterwards.
    func withPackageInInbox(_ body: (TemporaryFolder, FileDescriptor) throws -> Void) throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        try scratch.folder("containers/com.example.editor")
        try makePackage(scratch)
        let inbox = try FileDescriptor.openDirectory(atPath: scratch.path("inbox"))
        defer { inbox.closeIgnoringErrors() }
        try body(scratch, inbox)
    }

    func request(_ scratch: TemporaryFolder, _ inbox: FileDescriptor, _ name: String = "Report.rtfd") -> DeliveryBatch.PackageRequest {
        DeliveryBatch.PackageRequest(
            sourceFolder: DirectoryHandle(borrowing: inbox), sourceName: Array(name.utf8), sourcePath: scratch.path("inbox/\(name)").string,
            containerRoot: scratch.path("containers/com.example.editor").string, mailbox: "Mail", originalName: name,
            extensionChain: ".rtfd", contentType: "com.apple.rtfd", bundleIdentifier: "com.example.editor")
    }

    /// The package's files as delivered under `name`, or nil if a file differs or is missing.
    func deliveredWhole(_ scratch: TemporaryFolder, _ name: String) -> Bool {
        let base = "\(Self.sandbox)/\(name)"
        return scratch.allFiles(base) == Self.files.keys.sorted()
            && Self.files.allSatisfy { scratch.read("\(base)/\($0.key)") == $0.value }
            && scratch.list("\(base)/Empty") == []
            && FileManager.default.fileExists(atPath: scratch.path("\(base)/Empty").string)
    }

    @Test func aPackageIsDeliveredWholeThenUnderTheNextName() throws {
        try withPackageInInbox { scratch, inbox in
            let ledger = try Fixtures.ledger(scratch)
            let batch = DeliveryBatch(ledger: ledger, logger: Fixtures.logger)

            let first = batch.deliverPackage(request(scratch, inbox))
            let record = try #require(first.record, "\(String(describing: first.error))")
            #expect(record.finalPath == scratch.path("\(Self.sandbox)/Report.rtfd").string)
            #expect(record.size == Int64(Self.files.values.map(\.count).reduce(0, +)))
            #expect(record.annotation?.contains("\"originalFilename\":\"Report.rtfd\"") == true)
            #expect(deliveredWhole(scratch, "Report.rtfd"))
            #expect(scratch.list("inbox") == [], "the source tree is removed")

            try makePackage(scratch)
            let second = batch.deliverPackage(request(scratch, inbox))
            #expect(second.record?.finalPath == scratch.path("\(Self.sandbox)/Report-1.rtfd").string)
            #expect(deliveredWhole(scratch, "Report-1.rtfd"))
            #expect(scratch.list(Self.sandbox) == ["Report-1.rtfd", "Report.rtfd"])
            #expect(record.sha256 == second.record?.sha256, "the same tree gives the same digest")
        }
    }

    @Test(arguments: [DeliveryBatch.PackageStep.copy, .stage, .place, .commit])
    func aCrashAtAnyStepDeliversThePackageExactlyOnce(step: DeliveryBatch.PackageStep) throws {
        try withPackageInInbox { scratch, inbox in
            let crashed = DeliveryBatch(ledger: try Fixtures.ledger(scratch), logger: Fixtures.logger)
            _ = crashed.deliverPackage(request(scratch, inbox), stoppingAfter: step)

            // The next start.
            let batch = DeliveryBatch(ledger: try Fixtures.ledger(scratch), logger: Fixtures.logger)
            let report = try batch.recover(containerRoots: [scratch.path("containers/com.example.editor")])
            #expect(report.committed.count == (step == .place ? 1 : 0))
            #expect(report.sourcesRemoved == (step >= .place ? 1 : 0))
            #expect(scratch.list(Self.sandbox).filter { $0.hasPrefix(".") } == [], "no temporary folder left")
            if step >= .place {
                #expect(scratch.list("inbox") == [])
            } else {
                #expect(scratch.list("inbox") == ["Report.rtfd"])
                #expect(scratch.list(Self.sandbox) == [])
                #expect(batch.deliverPackage(request(scratch, inbox)).record != nil)
            }
            #expect(scratch.list(Self.sandbox) == ["Report.rtfd"])
            #expect(deliveredWhole(scratch, "Report.rtfd"))
            #expect(scratch.list("inbox") == [])
        }
    }

    /// A crash left a package placed but not committed, and its handler added a huge sparse file
    /// to it: the next start finds it is not the tree staged without reading that file (it would
    /// read 64 GiB of holes, 16 TiB under `make chaos`, before the daemon could start).
    @Test func aPlacedPackageGivenAHugeSparseFileIsSettledWithoutReadingIt() throws {
        try withPackageInInbox { scratch, inbox in
            let crashed = DeliveryBatch(ledger: try Fixtures.ledger(scratch), logger: Fixtures.logger)
            _ = crashed.deliverPackage(request(scratch, inbox), stoppingAfter: .place)
            let gibibytes = Int64(ProcessInfo.processInfo.environment["DOCROUTE_CHAOS_SPARSE_GIB"] ?? "") ?? 64
            let huge = open(scratch.path("\(Self.sandbox)/Report.rtfd/huge.bin").string, O_WRONLY | O_CREAT | O_EXCL, 0o600)
            #expect(huge >= 0)
            #expect(pwrite(huge, "added\n", 6, 0) == 6)
            #expect(ftruncate(huge, off_t(gibibytes << 30) - (gibibytes >= 16384 ? 1 << 20 : 0)) == 0)
            close(huge)

            let batch = DeliveryBatch(ledger: try Fixtures.ledger(scratch), logger: Fixtures.logger)
            let started = ContinuousClock.now
            let report = try batch.recover(containerRoots: [scratch.path("containers/com.example.editor")])
            let elapsed = ContinuousClock.now - started
            #expect(elapsed < .seconds(10), "recovery took \(elapsed)")
            #expect(report.committed.isEmpty && report.discarded.count == 1, "not the tree staged: \(report)")
            #expect(scratch.list("inbox") == ["Report.rtfd"], "its source stays, to be delivered again")
        }
    }

    @Test func aCommittedPackageLeftInItsInboxIsRemovedNotDeliveredTwice() throws {
        try withPackageInInbox { scratch, inbox in
            let batch = DeliveryBatch(ledger: try Fixtures.ledger(scratch), logger: Fixtures.logger)
            let first = batch.deliverPackage(request(scratch, inbox), stoppingAfter: .commit)
            #expect(first.record != nil)
            // Half removed, as a crash during the bottom-up removal leaves it.
            try FileManager.default.removeItem(atPath: scratch.path("inbox/Report.rtfd/Pictures").string)

            let again = batch.deliverPackage(request(scratch, inbox))
            guard case .alreadyDelivered(let earlier) = again else {
                Issue.record("expected alreadyDelivered, got \(again)")
                return
            }
            #expect(earlier.deliveryID == first.record?.deliveryID)
            #expect(scratch.list("inbox") == [])
            #expect(scratch.list(Self.sandbox) == ["Report.rtfd"])
        }
    }

    @Test func linksAndFIFOsInsideAPackageAreSkippedNeverFollowed() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        try scratch.folder("containers/com.example.editor")
        try makePackage(scratch)
        let package = scratch.path("inbox/Report.rtfd").string
        #expect(symlink("/etc/shadow", package + "/shadow") == 0)
        #expect(symlink("/etc", package + "/Pictures/etc") == 0)
        #expect(mkfifo(package + "/pipe", 0o600) == 0)
        try scratch.write("inbox/Report.rtfd/linked.txt", "another name of this file is outside the package\n")
        #expect(link(package + "/linked.txt", scratch.path("elsewhere").string) == 0)
        let inbox = try FileDescriptor.openDirectory(atPath: scratch.path("inbox"))
        defer { inbox.closeIgnoringErrors() }
        let batch = DeliveryBatch(ledger: try Fixtures.ledger(scratch), logger: Fixtures.logger)
        let outcome = batch.deliverPackage(request(scratch, inbox))
        #expect(outcome.record != nil, "\(String(describing: outcome.error))")
        let delivered = scratch.path("\(Self.sandbox)/Report.rtfd").string
        var info = stat()
        #expect(lstat(delivered + "/shadow", &info) != 0)
        #expect(lstat(delivered + "/pipe", &info) != 0)
        #expect(lstat(delivered + "/Pictures/etc", &info) != 0)
        #expect(lstat(delivered + "/linked.txt", &info) != 0, "a hard-linked file is skipped too")
        #expect(deliveredWhole(scratch, "Report.rtfd"))
        #expect(scratch.list("inbox") == [], "the whole source, links included, is removed")
    }

    @Test func aPackageThatCannotBePlacedLeavesItsSourceAndNoTemporary() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        try makePackage(scratch)
        // The sandbox's Documents is a link a handler planted: the delivery must not follow it.
        try scratch.folder("containers/com.example.editor")
        try scratch.folder("elsewhere")
        #expect(symlink(scratch.path("elsewhere").string, scratch.path("containers/com.example.editor/Documents").string) == 0)
        let inbox = try FileDescriptor.openDirectory(atPath: scratch.path("inbox"))
        defer { inbox.closeIgnoringErrors() }
        let batch = DeliveryBatch(ledger: try Fixtures.ledger(scratch), logger: Fixtures.logger)
        let outcome = batch.deliverPackage(request(scratch, inbox))
        #expect(outcome.error?.code == .symbolicLink, "\(String(describing: outcome.error))")
        #expect(scratch.list("elsewhere") == [])
        #expect(scratch.allFiles("inbox/Report.rtfd") == Self.files.keys.sorted())
    }
}
