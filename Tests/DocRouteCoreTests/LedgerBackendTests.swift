import DocRouteTestSupport
import Foundation
import Testing
@testable import DocRouteCore

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's delivery backend on a real state directory: what it commits is in the sandbox,
/// byte for byte, and in the ledger as owed until acknowledged; what it quarantines has its reason
/// beside it.
@Suite struct LedgerBackendTests {
    static let bundle = "com.example.viewer"
    static let pdbType = "com.sunsetlakesoftware.molecules.pdb"

    /// Opens `name` in the drop inbox as the intake does, and describes its delivery to `bundle`.
    static func delivery(_ name: String, inbox: Int32, folder: TemporaryFolder, configuration: DaemonConfiguration) throws -> DocumentDelivery {
        let file = try IntakeFile.open(name: Array(name.utf8), in: inbox, maxSize: configuration.maxFileSize).get()
        return DocumentDelivery(
            source: file, sourceFolder: inbox, sourceName: Array(name.utf8), sourcePath: folder.string("drop/" + name),
            containerRoot: configuration.containersDirectory + "/" + bundle, mailbox: "Inbox", extensionChain: ".pdb",
            contentType: pdbType, bundleIdentifier: bundle, owner: nil, sourceApplication: "org.docroute.drop", annotation: [:])
    }

    @Test func aCommittedDeliveryIsInTheSandboxAndOwedInTheLedgerUntilAcknowledged() async throws {
        let folder = try TemporaryFolder("backend")
        defer { folder.remove() }
        let configuration = try Fixtures.daemonConfiguration(in: folder)
        let content = Fixtures.content(1, size: 100_000)
        try folder.write("drop/1abc.pdb", content)
        let inbox = open(folder.string("drop"), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        try #require(inbox >= 0)
        defer { close(inbox) }

        let backend = try LedgerBackend(configuration: configuration, logger: Fixtures.logger)
        defer { backend.close() }
        try await backend.recover()
        let delivery = try Self.delivery("1abc.pdb", inbox: inbox, folder: folder, configuration: configuration)
        let outcomes = await backend.deliver([delivery])
        close(delivery.source.descriptor)
        await backend.settle()

        guard case .committed(let deliveryID, let finalPath, let sequence, let size)? = outcomes.first, outcomes.count == 1 else {
            Issue.record("expected one committed delivery, got \(outcomes)")
            return
        }
        let sandbox = configuration.containersDirectory + "/" + Self.bundle + "/Documents/Inbox/Inbox"
        #expect(finalPath == sandbox + "/1abc.pdb")
        #expect(size == Int64(content.count))
        #expect(FileManager.default.contents(atPath: finalPath).map(Array.init) == content, "the sandbox holds the bytes dropped")
        #expect(folder.list("drop").isEmpty, "the source has left the inbox")

        // The ledger owes the handler exactly this document, as the dispatcher will send it.
        #expect(try await backend.owedCount(bundleIdentifier: Self.bundle) == 1)
        let owed = try await backend.owed(bundleIdentifier: Self.bundle, afterSequence: 0, limit: 10)
        #expect(owed.map(\.sequence) == [sequence])
        let event = try #require(owed.first?.event)
        #expect(event.deliveryID == deliveryID)
        #expect(event.urlString == "file://" + finalPath)
        #expect(event.contentType == Self.pdbType)
        #expect(event.mailbox == "Inbox")
        #expect(event.sourceApplication == "org.docroute.drop")
        #expect(try await backend.owedCount(bundleIdentifier: "com.example.other") == 0)

        try await backend.acknowledge([DeliveryAcknowledgement(deliveryID: deliveryID, bundleIdentifier: Self.bundle, handled: true)])
        #expect(try await backend.owedCount(bundleIdentifier: Self.bundle) == 0, "acknowledged: no longer owed")
        #expect(try await backend.owed(bundleIdentifier: Self.bundle, afterSequence: 0, limit: 10).isEmpty)
        #expect(FileManager.default.fileExists(atPath: finalPath), "an acknowledgement leaves the document with the handler")
    }

    @Test func aBatchCommitsEveryFileUnderItsOwnNameInOrder() async throws {
        let folder = try TemporaryFolder("backend")
        defer { folder.remove() }
        let configuration = try Fixtures.daemonConfiguration(in: folder)
        let names = (1...5).map { "\($0)abc.pdb" }
        for (index, name) in names.enumerated() { try folder.write("drop/" + name, Fixtures.content(index, size: 1000 * (index + 1))) }
        let inbox = open(folder.string("drop"), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        try #require(inbox >= 0)
        defer { close(inbox) }
        let backend = try LedgerBackend(configuration: configuration, logger: Fixtures.logger)
        defer { backend.close() }
        try await backend.recover()

        let deliveries = try names.map { try Self.delivery($0, inbox: inbox, folder: folder, configuration: configuration) }
        let outcomes = await backend.deliver(deliveries)
        for delivery in deliveries { close(delivery.source.descriptor) }
        await backend.settle()

        var sequences: [Int64] = []
        for (index, outcome) in outcomes.enumerated() {
            guard case .committed(_, let finalPath, let sequence, _) = outcome else {
                Issue.record("\(names[index]): \(outcome)")
                continue
            }
            sequences.append(sequence)
            #expect(FileManager.default.contents(atPath: finalPath).map(Array.init) == Fixtures.content(index, size: 1000 * (index + 1)), "\(names[index])")
        }
        #expect(sequences == sequences.sorted() && Set(sequences).count == names.count, "commit order is the order handed over")
        #expect(folder.allFiles("state/containers/\(Self.bundle)/Documents/Inbox/Inbox") == names.sorted())
        #expect(try await backend.owedCount(bundleIdentifier: Self.bundle) == names.count)
    }

    @Test func aQuarantinedFileLeavesTheInboxWithItsReasonBesideIt() async throws {
        let folder = try TemporaryFolder("backend")
        defer { folder.remove() }
        let configuration = try Fixtures.daemonConfiguration(in: folder)
        try folder.write("drop/blob.qqq", [0x00, 0x01, 0x02])
        let inbox = open(folder.string("drop"), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        try #require(inbox >= 0)
        defer { close(inbox) }
        let backend = try LedgerBackend(configuration: configuration, logger: Fixtures.logger)
        defer { backend.close() }
        try await backend.recover()

        let reason = "no handler claims dyn.ah62d4rv4ge81c6pv; install a handler whose Info.plist claims it"
        try await backend.quarantine(name: Array("blob.qqq".utf8), in: inbox, mailbox: "Inbox", reason: reason, origin: folder.string("drop/blob.qqq"))
        #expect(folder.list("drop").isEmpty)
        #expect(folder.read("quarantine/Inbox/blob.qqq") == [0x00, 0x01, 0x02])
        let written = String(decoding: folder.read("quarantine/Inbox/blob.qqq.reason") ?? [], as: UTF8.self)
        #expect(written.contains(reason), "\(written)")
        #expect(try await backend.owedCount(bundleIdentifier: Self.bundle) == 0, "nothing is owed for a quarantined file")
    }
}
