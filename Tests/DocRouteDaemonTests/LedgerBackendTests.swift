import DocRouteTestSupport
import Foundation
import Testing
@testable import DocRouteConfiguration
@testable import DocRouteDelivery
@testable import DocRouteIntake
@testable import DocRouteLedger
import DocRoutePlatform
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's delivery backend on a real state directory: what it commits is in the sandbox,
/// byte for byte, and in the ledger as owed until acknowledged; what it quarantines has its reason
/// beside it.
@Suite struct LedgerBackendTests {
    static let bundle = "com.example.viewer"
    static let pdbType = "com.sunsetlakesoftware.molecules.pdb"

    /// A recovered backend on a fresh state directory, with `files` waiting in its drop inbox.
    final class Backend: Sendable {
        let folder: TemporaryFolder
        let configuration: DaemonConfiguration
        let backend: LedgerBackend
        /// The drop inbox, opened as the intake opens it.
        let inbox: Int32

        init(files: [String: [UInt8]]) async throws {
            folder = try TemporaryFolder("backend")
            configuration = try Fixtures.daemonConfiguration(in: folder)
            for (name, bytes) in files { try folder.write("drop/" + name, bytes) }
            inbox = open(folder.string("drop"), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            try #require(inbox >= 0)
            backend = try await runBlocking { [configuration] in try LedgerBackend(configuration: configuration, logger: Fixtures.logger) }
            try await backend.recover()
        }

        /// Runs `body` with a new backend and closes it afterwards, whatever `body` does.
        static func with(files: [String: [UInt8]], _ body: (Backend) async throws -> Void) async throws {
            try await withTearDown(try await Backend(files: files), { await $0.close() }, body)
        }

        /// Opens `name` as the intake does and describes its delivery to ``LedgerBackendTests/bundle``.
        func delivery(_ name: String) throws -> DocumentDelivery {
            let file = try IntakeFile.open(name: Array(name.utf8), in: inbox, maxSize: configuration.maxFileSize).get()
            return DocumentDelivery(
                source: file, sourceFolder: DirectoryHandle(borrowing: FileDescriptor(rawValue: inbox)), sourceName: Array(name.utf8), sourcePath: folder.string("drop/" + name),
                containerRoot: configuration.containersDirectory + "/" + LedgerBackendTests.bundle, mailbox: "Inbox", extensionChain: ".pdb",
                contentType: LedgerBackendTests.pdbType, bundleIdentifier: LedgerBackendTests.bundle, owner: nil,
                sourceApplication: "org.docroute.drop", annotation: [:])
        }

        /// Delivers `names` in one batch; their outcomes once committed and the sources settled.
        func deliver(_ names: [String]) async throws -> [DocumentDeliveryOutcome] {
            let deliveries = try names.map(delivery)
            let outcomes = await backend.deliver(deliveries)
            // No close here: the backend closed each source once its outcome was known.
            await backend.settle()
            return outcomes
        }

        /// Closes the ledger (a checkpoint: flushes) and removes the folder, off the cooperative pool.
        func close() async {
            let (backend, folder, inbox) = (self.backend, self.folder, self.inbox)
            _ = try? await runBlocking {
                backend.close()
                Glibc.close(inbox)
                folder.remove()
            }
        }
    }

    @Test func aCommittedDeliveryIsInTheSandboxAndOwedInTheLedgerUntilAcknowledged() async throws {
        let content = Fixtures.content(1, size: 100_000)
        try await Backend.with(files: ["1abc.pdb": content]) { setup in
            let (folder, configuration, backend) = (setup.folder, setup.configuration, setup.backend)
            let outcomes = try await setup.deliver(["1abc.pdb"])

            guard case .committed(let deliveryID, let finalPath, let sequence, let size)? = outcomes.first, outcomes.count == 1 else {
                Issue.record("expected one committed delivery, got \(outcomes)")
                return
            }
            let sandbox = configuration.containersDirectory + "/" + Self.bundle + "/Documents/Inbox/Inbox"
            #expect(finalPath == sandbox + "/1abc.pdb")
            #expect(size == Int64(content.count))
            #expect(FileManager.default.contents(atPath: finalPath).map { Array($0) } == content, "the sandbox holds the bytes dropped")
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
    }

    @Test func aBatchCommitsEveryFileUnderItsOwnNameInOrder() async throws {
        let names = (1...5).map { "\($0)abc.pdb" }
        var files: [String: [UInt8]] = [:]
        for (index, name) in names.enumerated() { files[name] = Fixtures.content(index, size: 1000 * (index + 1)) }
        try await Backend.with(files: files) { setup in
            let outcomes = try await setup.deliver(names)

            var sequences: [Int64] = []
            for (index, outcome) in outcomes.enumerated() {
                guard case .committed(_, let finalPath, let sequence, _) = outcome else {
                    Issue.record("\(names[index]): \(outcome)")
                    continue
                }
                sequences.append(sequence)
                #expect(FileManager.default.contents(atPath: finalPath).map { Array($0) } == Fixtures.content(index, size: 1000 * (index + 1)), "\(names[index])")
            }
            #expect(sequences == sequences.sorted() && Set(sequences).count == names.count, "commit order is the order handed over")
            #expect(setup.folder.allFiles("state/containers/\(Self.bundle)/Documents/Inbox/Inbox") == names.sorted())
            #expect(try await setup.backend.owedCount(bundleIdentifier: Self.bundle) == names.count)
        }
    }

    @Test func aQuarantinedFileLeavesTheInboxWithItsReasonBesideIt() async throws {
        try await Backend.with(files: ["blob.qqq": [0x00, 0x01, 0x02]]) { setup in
            let (folder, backend) = (setup.folder, setup.backend)

            let reason = "no handler claims dyn.ah62d4rv4ge81c6pv; install a handler whose Info.plist claims it"
            try await backend.quarantine(name: Array("blob.qqq".utf8), in: setup.inbox, mailbox: "Inbox", reason: reason, origin: folder.string("drop/blob.qqq"))
            #expect(folder.list("drop").isEmpty)
            #expect(folder.read("quarantine/Inbox/blob.qqq") == [0x00, 0x01, 0x02])
            let written = String(decoding: folder.read("quarantine/Inbox/blob.qqq.reason") ?? [], as: UTF8.self)
            #expect(written.contains(reason), "\(written)")
            #expect(try await backend.owedCount(bundleIdentifier: Self.bundle) == 0, "nothing is owed for a quarantined file")
        }
    }
}
