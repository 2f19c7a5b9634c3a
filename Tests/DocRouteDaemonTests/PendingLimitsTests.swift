import DocRouteTestSupport
import Foundation
import Synchronization
import SystemPackage
import Testing
@testable import DocRouteDelivery
@testable import DocRouteIntake
@testable import DocRouteLedger
@testable import DocRoutePlatform
@testable import DocRouteServer

#if canImport(Glibc)
import Glibc
#endif

/// What may wait unacknowledged for a handler and for one user's requests, and what one user may
/// ask of `open` per minute.
@Suite struct PendingLimitsTests {
    static let bundle = "com.acme.todolist"

    /// The ledger counts what each handler, and each requester, is owed: committed URLs and
    /// files add, acknowledgements take away, and a restart reads the same back (the requester is
    /// a column of its own).
    @Test func theLedgerCountsWhatHandlersAndRequestersAreOwedAcrossARestart() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        var ledger: DeliveryLedger? = try Fixtures.ledger(scratch)
        var ids: [UUID] = []
        for index in 0..<3 {
            ids.append(try ledger!.recordURL(bundleIdentifier: Self.bundle, url: "todolist://\(index)-" + String(repeating: "x", count: 100),
                                             requesterUID: 65534).deliveryID)
        }
        _ = try ledger!.recordURL(bundleIdentifier: Self.bundle, url: "todolist://root")
        let urlBytes = Int64("todolist://0-".utf8.count + 100)
        #expect(ledger!.pendingTally.owed(toHandler: Self.bundle) == .init(count: 4, bytes: 3 * urlBytes + 15))
        #expect(ledger!.pendingTally.owed(forUser: 65534) == .init(count: 3, bytes: 3 * urlBytes))

        try ledger!.acknowledge(deliveryIDs: [ids[0]], handled: true, bundleIdentifier: Self.bundle)
        try ledger!.acknowledge(deliveryIDs: [ids[0]], handled: true, bundleIdentifier: Self.bundle)
        #expect(ledger!.pendingTally.owed(forUser: 65534) == .init(count: 2, bytes: 2 * urlBytes), "an ack counts once")

        try ledger!.close()
        ledger = nil
        let reopened = try Fixtures.ledger(scratch)
        #expect(reopened.pendingTally.owed(toHandler: Self.bundle) == .init(count: 3, bytes: 2 * urlBytes + 15))
        #expect(reopened.pendingTally.owed(forUser: 65534) == .init(count: 2, bytes: 2 * urlBytes))
    }

    /// A place is refused at the count, or past the bytes while anything is owed (a single
    /// document larger than the byte limit still goes alone); a place given back frees it.
    @Test func aPlacePastALimitIsRefusedAndOneGivenBackFreesIt() {
        let tally = PendingTally()
        let limits = PendingTally.Limits(perHandler: .init(count: 3, bytes: 1000), perUser: .init(count: 2, bytes: 1000))
        let alone = tally.reserve(bundleIdentifier: "a", userID: nil, bytes: 5000, limits: limits)
        #expect((try? alone.get()) != nil, "alone, a document larger than the byte limit goes")
        guard case .failure(.handler("a", _, _)) = tally.reserve(bundleIdentifier: "a", userID: nil, bytes: 1, limits: limits) else {
            Issue.record("past the handler's bytes")
            return
        }
        tally.release(try! alone.get())
        let first = tally.reserve(bundleIdentifier: "a", userID: 7, bytes: 10, limits: limits)
        let second = tally.reserve(bundleIdentifier: "b", userID: 7, bytes: 10, limits: limits)
        #expect((try? first.get()) != nil && (try? second.get()) != nil)
        let third = tally.reserve(bundleIdentifier: "c", userID: 7, bytes: 10, limits: limits)
        guard case .failure(let refusal) = third, case .user(7, let owed, _) = refusal else {
            Issue.record("the user's third is over max_pending_per_uid: \(third)")
            return
        }
        #expect(owed.count == 2)
        #expect("\(refusal)".contains("max_pending_per_uid"))
        #expect((try? tally.reserve(bundleIdentifier: "c", userID: 8, bytes: 10, limits: limits).get()) != nil, "another user is not held back")
        tally.release(try! first.get())
        #expect((try? tally.reserve(bundleIdentifier: "c", userID: 7, bytes: 10, limits: limits).get()) != nil)
    }

    /// An inbox's batch past the handler's limit: what fits is delivered, the rest fails
    /// `over-limit`, retryable, its source still in the inbox; once the handler acknowledges, it
    /// goes.
    @Test func aBatchPastTheHandlersLimitDeliversWhatFitsAndLeavesTheRestInTheInbox() async throws {
        let files = Dictionary(uniqueKeysWithValues: (1...3).map { ("\($0)abc.pdb", Fixtures.content($0, size: 1000)) })
        let folder = try TemporaryFolder("backend")
        let configuration = try Fixtures.daemonConfiguration(in: folder, extra: "max_pending_per_handler = 2")
        for (name, bytes) in files { try folder.write("drop/" + name, bytes) }
        let backend = try await runBlocking { try LedgerBackend(configuration: configuration, logger: Fixtures.logger) }
        let inbox = open(folder.string("drop"), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { backend.close(); close(inbox); folder.remove() }
        try await backend.recover()
        func delivery(_ name: String) throws -> DocumentDelivery {
            let file = try IntakeFile.open(name: Array(name.utf8), in: inbox, maxSize: .max).get()
            return DocumentDelivery(
                source: file, sourceFolder: DirectoryHandle(borrowing: FileDescriptor(rawValue: inbox)), sourceName: Array(name.utf8), sourcePath: folder.string("drop/" + name),
                containerRoot: configuration.containersDirectory + "/" + LedgerBackendTests.bundle, mailbox: "Inbox", extensionChain: ".pdb",
                contentType: LedgerBackendTests.pdbType, bundleIdentifier: LedgerBackendTests.bundle, owner: nil,
                sourceApplication: "org.docroute.drop", annotation: [:])
        }
        let deliveries = try ["1abc.pdb", "2abc.pdb", "3abc.pdb"].map(delivery)
        let outcomes = await backend.deliver(deliveries)
        // The backend closes each source once its outcome is known, the refused one's too: no
        // descriptor of theirs is left open on the file (a number reused since names another).
        for delivery in deliveries {
            var status = stat()
            let stillTheSource = fstat(delivery.source.descriptor, &status) == 0 && UInt64(status.st_ino) == delivery.source.inode
                && UInt64(status.st_dev) == delivery.source.device
            #expect(!stillTheSource, "the descriptor of \(delivery.sourcePath) is still open")
        }
        await backend.settle()

        guard outcomes.count == 3, case .committed(let first, _, _, _) = outcomes[0], case .committed = outcomes[1],
              case .failed(let error) = outcomes[2] else {
            Issue.record("two committed, the third refused: \(outcomes)")
            return
        }
        #expect(error.code == .overLimit && error.isRetryable)
        #expect(error.message.contains("max_pending_per_handler"), "\(error.message)")
        #expect(folder.list("drop") == ["3abc.pdb"], "the refused file waits in its inbox")
        #expect(try await backend.owedCount(bundleIdentifier: LedgerBackendTests.bundle) == 2)

        try await backend.acknowledge([DeliveryAcknowledgement(deliveryID: first, bundleIdentifier: LedgerBackendTests.bundle, handled: true)])
        let again = try delivery("3abc.pdb")
        let retried = await backend.deliver([again])
        await backend.settle()
        guard case .committed? = retried.first else {
            Issue.record("once the handler took one, the waiting file goes: \(retried)")
            return
        }
        #expect(folder.list("drop") == [])
    }

    /// Requests and bytes per minute per uid, refilled a sixtieth a second; root is not counted
    /// unless `limit_root`; a file larger than a minute's bytes is taken when there is any left.
    @Test func aUserHasABudgetOfRequestsAndBytesAMinute() {
        let clock = Mutex(ContinuousClock.now)
        let budget = OpenBudget(requestsPerMinute: 3, bytesPerMinute: 600, now: { clock.withLock { $0 } })
        for _ in 0..<3 { #expect((try? budget.takeRequest(1000).get()) != nil) }
        guard case .failure(let refusal) = budget.takeRequest(1000) else {
            Issue.record("the fourth request within the minute is refused")
            return
        }
        #expect(refusal.description.contains("open_requests_per_minute") && refusal.retryAfterSeconds == 20, "\(refusal)")
        #expect((try? budget.takeRequest(1001).get()) != nil, "another uid has its own budget")
        #expect((try? budget.takeRequest(0).get()) != nil, "root is not counted")
        clock.withLock { $0 += .seconds(20) }
        #expect((try? budget.takeRequest(1000).get()) != nil, "a twentieth of a minute later, one more")

        #expect((try? budget.takeBytes(1000, 5000).get()) != nil, "larger than a minute's worth, taken while any is left")
        guard case .failure(let bytes) = budget.takeBytes(1000, 1) else {
            Issue.record("then nothing until the debt is paid")
            return
        }
        #expect(bytes.description.contains("open_bytes_per_minute"), "\(bytes)")
        clock.withLock { $0 += .seconds(441) }
        #expect((try? budget.takeBytes(1000, 1).get()) != nil)

        let strict = OpenBudget(requestsPerMinute: 1, bytesPerMinute: 1, limitsRoot: true, now: { clock.withLock { $0 } })
        #expect((try? strict.takeRequest(0).get()) != nil)
        #expect((try? strict.takeRequest(0).get()) == nil, "limit_root counts root too")
    }
}
