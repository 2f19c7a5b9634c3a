@testable import DocRouteDelivery
@testable import DocRouteIntake
import DocRouteTestSupport
import Foundation
import SystemPackage
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A sparse source's copy keeps its holes: any user can make a 1 GiB file of a few blocks and
/// pass it to `open`, and a copy that fills the holes takes 1 GiB of the disk the containers and
/// the ledger share, each time.
@Suite struct SparseCopyTests {
    let mailbox = "Documents/Inbox/Mail"

    /// The copy reads back the same bytes, its digest is `sha256sum`'s, and it takes about the
    /// disk its source takes (here 12 KiB of data in 64 MiB), whichever copy method is set.
    @Test(arguments: [SandboxWriter.CopyMethod.default, .copyFileRange, .readWrite])
    func aSparseSourceGivesASparseCopyOfTheSameBytes(method: SandboxWriter.CopyMethod) throws {
        let (scratch, container, inbox) = try DeliveryBatchTests.viewerScene()
        defer { inbox.close(); scratch.remove() }
        let size: Int64 = 64 << 20
        try SparseFile.createWithThreePieces(scratch.string("inbox/sparse.img"), size: size)
        let sourceAllocated = try #require(SparseFile.allocatedBytes(scratch.string("inbox/sparse.img")))
        try #require(sourceAllocated < size / 16, "the test's file system keeps holes (\(sourceAllocated) bytes allocated)")
        let source = scratch.string("inbox/sparse.img")
        let kept = scratch.string("kept.img")
        // The source leaves its inbox once delivered: a copy of it to compare with.
        try SparseFile.createWithThreePieces(kept, size: size)
        let batch = DeliveryBatch(ledger: try Fixtures.ledger(scratch), options: .init(copyMethod: method), logger: Fixtures.logger)

        let outcome = batch.deliver([try inbox.request("sparse.img", container: container)])[0]

        #expect(outcome.error == nil, "\(String(describing: outcome.error))")
        let copy = scratch.string("containers/com.example.viewer/\(mailbox)/sparse.img")
        #expect(!FileManager.default.fileExists(atPath: source))
        #expect(SparseFile.sameBytes(copy, kept), "the copy reads back the source's bytes")
        #expect(outcome.record?.size == size)
        #expect(outcome.record?.sha256 == (try CopyHashFollowerTests.sha256sum(copy)))
        let copyAllocated = try #require(SparseFile.allocatedBytes(copy))
        #expect(copyAllocated <= sourceAllocated + 64 * 1024, "copy takes \(copyAllocated) bytes of disk, its source \(sourceAllocated)")
    }

    /// A sparse file ending in a hole, and one that is a hole only: the length is kept either way.
    @Test func aTrailingHoleAndAFileOfOnlyAHoleKeepTheirLength() throws {
        let (scratch, container, inbox) = try DeliveryBatchTests.viewerScene()
        defer { inbox.close(); scratch.remove() }
        let size: Int64 = 8 << 20
        try SparseFile.create(scratch.string("inbox/tail.img"), size: size, pieces: [(4096, Array(repeating: 7, count: 100))])
        try SparseFile.create(scratch.string("inbox/empty.img"), size: size, pieces: [])
        try SparseFile.create(scratch.string("tail.img"), size: size, pieces: [(4096, Array(repeating: 7, count: 100))])
        try SparseFile.create(scratch.string("empty.img"), size: size, pieces: [])
        let batch = DeliveryBatch(ledger: try Fixtures.ledger(scratch), logger: Fixtures.logger)

        let outcomes = batch.deliver([try inbox.request("tail.img", container: container), try inbox.request("empty.img", container: container)])

        #expect(outcomes.compactMap(\.error).map(\.description) == [])
        for name in ["tail.img", "empty.img"] {
            let copy = scratch.string("containers/com.example.viewer/\(mailbox)/\(name)")
            #expect(SparseFile.sameBytes(copy, scratch.string(name)), "\(name)")
            #expect((SparseFile.allocatedBytes(copy) ?? .max) <= 64 * 1024, "\(name) takes \(SparseFile.allocatedBytes(copy) ?? -1) bytes")
        }
        // SHA-256 of 8 MiB of zeros.
        #expect(outcomes[1].record?.sha256 == (try CopyHashFollowerTests.sha256sum(scratch.string("empty.img"))))
    }

    /// `max_file_allocation`: a file whose copy would take more disk than allowed is refused at
    /// intake, by its allocated blocks, while a far larger sparse one (small on disk) is taken.
    @Test func aFileIsRefusedByTheDiskItsCopyWouldTakeNotOnlyByItsSize() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        try scratch.write("dense.bin", Fixtures.content(1, size: 2 << 20))
        try SparseFile.createWithThreePieces(scratch.string("sparse.img"), size: 256 << 20)
        let folder = try FileDescriptor.openDirectory(atPath: scratch.root)
        defer { folder.closeIgnoringErrors() }

        let dense = IntakeFile.open(name: Array("dense.bin".utf8), in: folder.rawValue, maxSize: 1 << 30, maxAllocation: 1 << 20)
        guard case .failure(.takesTooMuchDisk(let allocated, let limit)) = dense else {
            Issue.record("expected a refusal for the disk it takes, got \(dense)")
            return
        }
        #expect(allocated >= 2 << 20 && limit == 1 << 20)
        #expect("\(IntakeFile.Refusal.takesTooMuchDisk(allocated: allocated, limit: limit))".contains("max_file_allocation"))

        let sparse = IntakeFile.open(name: Array("sparse.img".utf8), in: folder.rawValue, maxSize: 1 << 30, maxAllocation: 1 << 20)
        guard case .success(let file) = sparse else {
            Issue.record("a sparse file small on disk is taken, got \(sparse)")
            return
        }
        close(file.descriptor)
        #expect(file.size == 256 << 20 && file.allocatedBytes < 1 << 20)

        // The descriptor form (`open` with "descriptor":true) refuses the same way.
        let descriptor = try folder.open(FilePath.Component("dense.bin"), flags: O_RDONLY)
        defer { descriptor.closeIgnoringErrors() }
        let adopted = IntakeFile.adopt(descriptor: descriptor.rawValue, maxSize: 1 << 30, maxAllocation: 1 << 20)
        guard case .failure(.takesTooMuchDisk) = adopted else {
            Issue.record("expected a refusal for the disk it takes, got \(adopted)")
            return
        }
    }
}

extension SparseCopyTests {
    /// A sparse file inside a package document stays sparse too (packages come from the inboxes,
    /// which the mail delivery agent and the admin group write).
    @Test func aSparseFileInAPackageStaysSparse() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        try scratch.folder("containers/com.example.editor")
        try scratch.write("inbox/Report.rtfd/TXT.rtf", "{\\rtf1 hello}\n")
        try SparseFile.createWithThreePieces(scratch.string("inbox/Report.rtfd/disk.img"), size: 64 << 20)
        try SparseFile.createWithThreePieces(scratch.string("kept.img"), size: 64 << 20)
        let inbox = try FileDescriptor.openDirectory(atPath: scratch.path("inbox"))
        defer { inbox.closeIgnoringErrors() }
        let batch = DeliveryBatch(ledger: try Fixtures.ledger(scratch), logger: Fixtures.logger)

        let outcome = batch.deliverPackage(PackageDeliveryTests().request(scratch, inbox))

        #expect(outcome.error == nil, "\(String(describing: outcome.error))")
        let copy = scratch.string("\(PackageDeliveryTests.sandbox)/Report.rtfd/disk.img")
        #expect(SparseFile.sameBytes(copy, scratch.string("kept.img")))
        #expect((SparseFile.allocatedBytes(copy) ?? .max) <= 64 * 1024, "takes \(SparseFile.allocatedBytes(copy) ?? -1) bytes")
    }
}
