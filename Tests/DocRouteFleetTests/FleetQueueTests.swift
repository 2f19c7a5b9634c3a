import DocRouteConfiguration
import DocRouteFleet
import DocRoutePlatform
import DocRouteTestSupport
import Foundation
import Logging
import PostgresNIO
import Synchronization
import SystemPackage
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The fleet's delivery store in a real PostgreSQL: what intake commits is what a claiming host
/// copies, byte for byte; a batch is whole or absent; each delivery is claimed by one host at a
/// time, again when its lease runs out or it is given back; acknowledgements end it once.
@Suite(.serialized) struct FleetQueueTests {
    static let logger = Logger(label: "test.fleet.queue", factory: { _ in SwiftLogNoOpLogHandler() })
    static let handler = "com.example.viewer"

    /// A test's server, its database settings and a folder for source files and copies.
    struct Fleet: Sendable {
        let server: PostgresServer
        let folder: TemporaryFolder
        let address: FleetDatabaseAddress

        func database(host: String, leaseSeconds: Int = 30) throws -> FleetDatabase {
            try FleetDatabase(configuration: FleetConfiguration(database: address, hostName: host, leaseSeconds: leaseSeconds),
                              password: "s3cret-word")
        }

        func queue(host: String, leaseSeconds: Int = 30) throws -> FleetQueue {
            FleetQueue(database: try database(host: host, leaseSeconds: leaseSeconds), hostName: host, logger: FleetQueueTests.logger)
        }

        /// SQL as the superuser in database `fleet`, on a thread of its own.
        @discardableResult
        func sql(_ text: String) async throws -> String {
            let server = server
            return try await runBlocking { try server.psql(text, database: "fleet") }
        }

        /// A source file holding `bytes`, open for reading; closed by the caller.
        func source(_ name: String, _ bytes: [UInt8]) throws -> SystemPackage.FileDescriptor {
            let path = folder.string + "/" + name
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            return try SystemPackage.FileDescriptor.open(FilePath(path), .readOnly)
        }

        /// `queue`'s copy of `claim`'s document, as a claiming host writes it.
        func copy(_ claim: FleetClaim, from queue: FleetQueue) async throws -> [UInt8] {
            let path = folder.string + "/copy-" + claim.deliveryID.uuidString
            let descriptor = try SystemPackage.FileDescriptor.open(FilePath(path), .readWrite, options: [.create, .exclusiveCreate],
                                                                   permissions: [.ownerReadWrite])
            defer { try? descriptor.close() }
            try await queue.copyBytes(of: claim.documentID, to: descriptor)
            return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        }
    }

    /// A server with role `docroute` owning database `fleet` at the latest schema.
    func withFleet(_ body: (Fleet) async throws -> Void) async throws {
        let server = try await runBlocking { try PostgresServer() }
        try await withTearDown(server, { server in _ = try? await runBlocking { server.stop() } }) { server in
            try await runBlocking { try server.createRoleAndDatabase(role: "docroute", password: "s3cret-word", database: "fleet") }
            let folder = try TemporaryFolder("fq")
            defer { folder.remove() }
            let fleet = Fleet(server: server, folder: folder,
                              address: try FleetDatabaseAddress.parse(server.url(user: "docroute", database: "fleet")))
            _ = try await fleet.database(host: "setup").withConnection(logger: Self.logger) { connection in
                try await FleetSchema.migrate(on: connection, host: "setup", logger: Self.logger)
            }
            try await body(fleet)
        }
    }

    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var random = SplitMix(seed: seed)
        var bytes = [UInt8](repeating: 0, count: count)
        var index = 0
        while index < count {
            var word = random.next()
            for _ in 0..<8 where index < count {
                bytes[index] = UInt8(truncatingIfNeeded: word)
                word >>= 8
                index += 1
            }
        }
        return bytes
    }

    static func document(_ name: String, _ descriptor: SystemPackage.FileDescriptor, size: Int, identity: String? = nil,
                         handler: String = handler, delivery: UUID = UUID()) -> FleetDocument {
        FleetDocument(deliveryID: delivery, sourceIdentity: identity ?? "alpha 1:\(name.hashValue) \(size) 0 /inbox/\(name)",
                      fileName: name, contentType: "com.adobe.pdf", extensionChain: ".pdf", mailbox: "inbox",
                      bundleIdentifier: handler, sourceApplication: "com.example.scanner",
                      annotationJSON: #"{"note": "for \#(name)"}"#, size: Int64(size), descriptor: descriptor)
    }

    @Test func whatIntakeCommitsIsWhatAClaimingHostCopiesByteForByte() async throws {
        try await withFleet { fleet in
            // 5 MiB and a bit: six chunks, the last a short one; also one empty and one of exactly a chunk.
            let contents: [(String, [UInt8])] = [
                ("big.pdf", Self.bytes(5 * FleetQueue.chunkSize + 17, seed: 1)),
                ("empty.pdf", []),
                ("one-chunk.pdf", Self.bytes(FleetQueue.chunkSize, seed: 2)),
                ("small.pdf", Array("%PDF-1.4 small".utf8)),
            ]
            var documents: [FleetDocument] = []
            for (name, bytes) in contents {
                documents.append(Self.document(name, try fleet.source(name, bytes), size: bytes.count))
            }
            defer { for document in documents { try? document.descriptor.close() } }
            let alpha = try fleet.queue(host: "alpha")
            let beta = try fleet.queue(host: "beta")
            try await alpha.enqueue(documents)
            #expect(try await fleet.sql("SELECT count(*) FROM document_chunks WHERE chunk_index >= 0 GROUP BY document_id ORDER BY 1")
                == "1\n1\n6")

            let claims = try await beta.claim(handler: Self.handler, limit: 10)
            #expect(claims.map(\.deliveryID) == documents.map(\.deliveryID), "in commit order")
            for (claim, (document, (name, bytes))) in zip(claims, zip(documents, contents)) {
                #expect(claim.fileName == name)
                #expect(claim.size == Int64(bytes.count))
                #expect(claim.bundleIdentifier == Self.handler && claim.mailbox == "inbox")
                #expect(claim.contentType == "com.adobe.pdf" && claim.extensionChain == ".pdf" && claim.sourceApplication == "com.example.scanner")
                #expect(claim.intakeHost == "alpha" && claim.attempts == 1)
                let annotation = try JSONSerialization.jsonObject(with: Data(claim.annotationJSON.utf8)) as? [String: String]
                #expect(annotation == ["note": "for \(name)"], "\(claim.annotationJSON) of \(document.annotationJSON)")
                let copied = try await fleet.copy(claim, from: beta)
                #expect(copied.count == bytes.count)
                #expect(copied == bytes, "the copy of \(name) differs")
            }
            #expect(try await beta.tally() == FleetTally(claimedHere: 4, claimedByHost: ["beta": 4]))
            #expect(try await alpha.tally() == FleetTally(claimedElsewhere: 4, claimedByHost: ["beta": 4]))

            // A claim round's documents of one chunk in one query: the big one is not among them
            // (it is copied a chunk at a time), nor the empty one (it has no chunk).
            let small = try await beta.smallDocuments(Dictionary(uniqueKeysWithValues: claims.map { ($0.documentID, $0.size) }))
            let expected = Dictionary(uniqueKeysWithValues: zip(claims, contents).filter { $0.0.size > 0 && $0.0.size <= Int64(FleetQueue.chunkSize) }
                .map { ($0.0.documentID, $0.1.1) })
            #expect(small.count == 2)
            #expect(small == expected)
        }
    }

    @Test func aBatchWithASourceThatFailsLeavesNothingOfTheBatch() async throws {
        try await withFleet { fleet in
            let first = try fleet.source("first.pdf", Self.bytes(3 * FleetQueue.chunkSize, seed: 3))
            let last = try fleet.source("last.pdf", Self.bytes(100, seed: 4))
            // A folder where a file was: its read fails (EISDIR) after the first document's chunks
            // went to the server.
            let broken = try SystemPackage.FileDescriptor.open(fleet.folder.root, .readOnly)
            // Said to be longer than it is: it ends early, as a source truncated meanwhile.
            let short = try fleet.source("short.pdf", Self.bytes(10, seed: 6))
            defer { for descriptor in [first, last, broken, short] { try? descriptor.close() } }
            let queue = try fleet.queue(host: "alpha")
            for failing in [Self.document("broken.pdf", broken, size: 10), Self.document("short.pdf", short, size: 2 * FleetQueue.chunkSize)] {
                await #expect {
                    try await queue.enqueue([Self.document("first.pdf", first, size: 3 * FleetQueue.chunkSize), failing,
                                             Self.document("last.pdf", last, size: 100)])
                } throws: { error in
                    (error as? FleetError)?.code == .fileAccess && "\(error)".contains(failing.fileName)
                }
                #expect(try await fleet.sql("SELECT (SELECT count(*) FROM documents) || ' ' || (SELECT count(*) FROM document_chunks) || ' ' || (SELECT count(*) FROM deliveries)") == "0 0 0")
            }
            // The queue's connection is still good for the next batch.
            try await queue.enqueue([Self.document("last.pdf", last, size: 100)])
            #expect(try await queue.tally() == FleetTally(owed: 1))
        }
    }

    @Test func callsOnOneQueueNeverSeeAnotherCallsOpenTransaction() async throws {
        try await withFleet { fleet in
            let first = try fleet.source("first.pdf", Self.bytes(4 * FleetQueue.chunkSize, seed: 9))
            let broken = try SystemPackage.FileDescriptor.open(fleet.folder.root, .readOnly)
            defer { for descriptor in [first, broken] { try? descriptor.close() } }
            let queue = try fleet.queue(host: "alpha")
            // A batch that is rolled back at its second document, with counts and claims on the
            // same queue meanwhile: none of them may run inside its transaction and see its first.
            let seen = try await withThrowingTaskGroup(of: [Int].self) { group in
                group.addTask {
                    await #expect(throws: FleetError.self) {
                        try await queue.enqueue([Self.document("first.pdf", first, size: 4 * FleetQueue.chunkSize),
                                                 Self.document("broken.pdf", broken, size: 10)])
                    }
                    return []
                }
                for _ in 0..<20 {
                    group.addTask {
                        let owed = try await queue.tally().owed
                        let claimed = try await queue.claim(handler: Self.handler, limit: 5).count
                        return [owed, claimed]
                    }
                }
                var seen: [Int] = []
                for try await counts in group { seen += counts }
                return seen
            }
            #expect(seen.allSatisfy { $0 == 0 }, "\(seen)")
            #expect(try await fleet.sql("SELECT count(*) FROM deliveries") == "0")
        }
    }

    @Test func aSourceCommittedTwiceKeepsItsFirstDelivery() async throws {
        try await withFleet { fleet in
            let descriptor = try fleet.source("twice.pdf", Array("twice".utf8))
            defer { try? descriptor.close() }
            let queue = try fleet.queue(host: "alpha")
            let identity = FleetSourceIdentity.text(host: "alpha", device: 64769, inode: 1234, size: 5, modificationNanoseconds: 1_700_000_000_123_456_789, path: "/srv/in box/twice.pdf")
            let first = Self.document("twice.pdf", descriptor, size: 5, identity: identity)
            try await queue.enqueue([first])
            // After a crash between the commit and the source's removal, intake commits it again;
            // and twice in one batch.
            try await queue.enqueue([Self.document("twice.pdf", descriptor, size: 5, identity: identity)])
            try await queue.enqueue([Self.document("twice.pdf", descriptor, size: 5, identity: identity + "x"),
                                     Self.document("twice.pdf", descriptor, size: 5, identity: identity + "x")])
            #expect(try await fleet.sql("SELECT count(*) FROM deliveries") == "2")
            let found = try await queue.committedSources([identity, identity + "x", "alpha 0:0 0 0 /never"])
            #expect(found.count == 2)
            #expect(found[identity] == first.deliveryID)
            // Another host's same identity text is its own source.
            #expect(try await fleet.queue(host: "beta").committedSources([identity]) == [:])
            let claims = try await queue.claim(handler: Self.handler, limit: 10)
            #expect(claims.count == 2 && claims[0].deliveryID == first.deliveryID)
        }
    }

    @Test func twoHostsClaimingTogetherTakeEachDeliveryOnce() async throws {
        try await withFleet { fleet in
            let descriptor = try fleet.source("tiny.pdf", Array("tiny".utf8))
            defer { try? descriptor.close() }
            let intake = try fleet.queue(host: "alpha")
            var all: Set<UUID> = []
            for batch in 0..<5 {
                let documents = (0..<100).map { index in
                    Self.document("tiny.pdf", descriptor, size: 4, identity: "alpha 1:\(batch * 100 + index) 4 0 /inbox/tiny.pdf")
                }
                all.formUnion(documents.map(\.deliveryID))
                try await intake.enqueue(documents)
            }
            #expect(all.count == 500)
            let alpha = try fleet.queue(host: "alpha")
            let beta = try fleet.queue(host: "beta")
            @Sendable func drain(_ queue: FleetQueue) async throws -> [FleetClaim] {
                var claimed: [FleetClaim] = []
                while true {
                    let claims = try await queue.claim(handler: Self.handler, limit: 7)
                    if claims.isEmpty { return claimed }
                    claimed += claims
                }
            }
            async let byAlpha = drain(alpha)
            async let byBeta = drain(beta)
            let (a, b) = try await (byAlpha, byBeta)
            let alphaIDs = Set(a.map(\.deliveryID))
            let betaIDs = Set(b.map(\.deliveryID))
            #expect(alphaIDs.count == a.count && betaIDs.count == b.count, "a host claimed one delivery twice")
            #expect(alphaIDs.isDisjoint(with: betaIDs), "\(alphaIDs.intersection(betaIDs).count) claimed by both")
            #expect(alphaIDs.union(betaIDs) == all, "\(all.subtracting(alphaIDs.union(betaIDs)).count) never claimed")
            #expect((a + b).allSatisfy { $0.attempts == 1 })
            #expect(try await alpha.tally() == FleetTally(claimedHere: a.count, claimedElsewhere: b.count,
                                                          claimedByHost: ["alpha": a.count, "beta": b.count].filter { $0.value > 0 }))
            #expect(try await fleet.sql("SELECT claimed_by, count(*) FROM deliveries GROUP BY 1 ORDER BY 1")
                == [("alpha", a.count), ("beta", b.count)].filter { $0.1 > 0 }.map { "\($0.0)|\($0.1)" }.joined(separator: "\n"))
        }
    }

    @Test func aClaimStopsWhereItsSmallDocumentsWouldPassTheMemoryBudgetAndTheNextClaimsTakeTheRest() async throws {
        try await withFleet { fleet in
            // Small, small, larger than a chunk (copied to disk: not counted), small, small, small.
            let sizes = [600, 300, FleetQueue.chunkSize + 1, 300, 500, 100]
            var descriptors: [SystemPackage.FileDescriptor] = []
            defer { for descriptor in descriptors { try? descriptor.close() } }
            let intake = try fleet.queue(host: "alpha")
            var documents: [FleetDocument] = []
            var contents: [UUID: [UInt8]] = [:]
            for (index, size) in sizes.enumerated() {
                let bytes = Self.bytes(size, seed: UInt64(40 + index))
                let descriptor = try fleet.source("budget-\(index).pdf", bytes)
                descriptors.append(descriptor)
                let document = Self.document("budget-\(index).pdf", descriptor, size: size)
                documents.append(document)
                contents[document.deliveryID] = bytes
                // One batch each: commit order is the order above.
                try await intake.enqueue([document])
            }
            let ids = documents.map(\.deliveryID)
            let beta = try fleet.queue(host: "beta")
            // 600 + 300 fit 1,000 bytes, the large one does not count, the next 300 would pass it.
            let first = try await beta.claim(handler: Self.handler, limit: 10, memoryBytes: 1000)
            #expect(first.map(\.deliveryID) == Array(ids[0..<3]))
            // A first document over the budget is taken all the same, alone.
            let second = try await beta.claim(handler: Self.handler, limit: 10, memoryBytes: 200)
            #expect(second.map(\.deliveryID) == [ids[3]])
            let third = try await beta.claim(handler: Self.handler, limit: 10, memoryBytes: 1000)
            #expect(third.map(\.deliveryID) == Array(ids[4..<6]))
            #expect(try await beta.claim(handler: Self.handler, limit: 10, memoryBytes: 1000) == [])
            // Every one claimed once, and copied whole.
            for claim in first + second + third {
                #expect(claim.attempts == 1)
                #expect(try await fleet.copy(claim, from: beta) == contents[claim.deliveryID])
            }
            #expect(try await fleet.sql("SELECT count(*) FROM deliveries WHERE state = 'claimed' AND claimed_by = 'beta'") == "6")
            #expect(try await fleet.sql("SELECT count(*) FROM history_events WHERE event = 'claimed'") == "6")
        }
    }

    @Test func aLeaseRunOutLetsAnotherHostClaimAndARenewedOneDoesNot() async throws {
        try await withFleet { fleet in
            let descriptor = try fleet.source("leased.pdf", Array("leased bytes".utf8))
            defer { try? descriptor.close() }
            let alpha = try fleet.queue(host: "alpha", leaseSeconds: 2)
            let beta = try fleet.queue(host: "beta", leaseSeconds: 2)
            let document = Self.document("leased.pdf", descriptor, size: 12)
            try await alpha.enqueue([document])
            #expect(try await alpha.claim(handler: Self.handler, limit: 5).map(\.deliveryID) == [document.deliveryID])
            #expect(try await beta.claim(handler: Self.handler, limit: 5) == [], "alpha's lease holds")
            // The lease (2 s) runs out: beta claims the same delivery, a second attempt.
            try await Task.sleep(for: .milliseconds(2500))
            let again = try await beta.claim(handler: Self.handler, limit: 5)
            #expect(again.map(\.deliveryID) == [document.deliveryID])
            #expect(again.first?.attempts == 2)
            #expect(try await fleet.copy(#require(again.first), from: beta) == Array("leased bytes".utf8))
            #expect(try await alpha.renewLeases(of: [document.deliveryID]) == 0, "alpha holds nothing any more")

            // Renewed after it ran out (and before anyone took it), the lease holds again.
            try await fleet.sql("UPDATE deliveries SET lease_until = now() - interval '1 minute'")
            let gamma = try fleet.queue(host: "gamma", leaseSeconds: 30)
            let renewing = try fleet.queue(host: "beta", leaseSeconds: 30)
            #expect(try await renewing.renewLeases(of: [document.deliveryID]) == 1)
            #expect(try await gamma.claim(handler: Self.handler, limit: 5) == [])
            #expect(try await fleet.sql("SELECT claimed_by || ' ' || attempts || ' ' || (lease_until > now() + interval '20 seconds') FROM deliveries") == "beta 2 true")
        }
    }

    @Test func anAcknowledgementEndsADeliveryOnceAndItsBytesGoWithTheLast() async throws {
        try await withFleet { fleet in
            let first = try fleet.source("first.pdf", Self.bytes(FleetQueue.chunkSize + 1, seed: 7))
            let second = try fleet.source("second.pdf", Self.bytes(10, seed: 8))
            defer { for descriptor in [first, second] { try? descriptor.close() } }
            let alpha = try fleet.queue(host: "alpha")
            let beta = try fleet.queue(host: "beta")
            let handled = Self.document("first.pdf", first, size: FleetQueue.chunkSize + 1)
            let declined = Self.document("second.pdf", second, size: 10)
            try await alpha.enqueue([handled, declined])
            // A second delivery of the first document, as a document routed to two handlers would have.
            let other = UUID()
            try await fleet.sql("INSERT INTO deliveries (id, document_id, handler, mailbox) SELECT '\(other)', document_id, 'com.example.other', 'inbox' FROM deliveries WHERE id = '\(handled.deliveryID)'")
            _ = try await beta.claim(handler: Self.handler, limit: 5)

            #expect(try await beta.acknowledge([handled.deliveryID], handled: true) == [handled.deliveryID])
            #expect(try await alpha.acknowledge([handled.deliveryID], handled: true) == [], "a second acknowledgement is not a first")
            #expect(try await fleet.sql("SELECT count(*) FROM document_chunks") == "3", "the other delivery still needs the bytes")
            #expect(try await beta.acknowledge([other, handled.deliveryID], handled: true) == [other])
            #expect(try await beta.acknowledge([declined.deliveryID], handled: false) == [declined.deliveryID])
            #expect(try await fleet.sql("SELECT count(*) FROM document_chunks") == "0")
            #expect(try await fleet.sql("SELECT delivery_id || ' ' || host || ' ' || event FROM history_events WHERE event IN ('acknowledged', 'declined') ORDER BY id")
                == ["\(handled.deliveryID) beta acknowledged", "\(other) beta acknowledged", "\(declined.deliveryID) beta declined"]
                    .map { $0.lowercased() }.joined(separator: "\n"))
            #expect(try await beta.tally() == FleetTally(acknowledged: 3, declined: 1))
            // Acknowledged, never claimable again, by any host.
            #expect(try await alpha.claim(handler: Self.handler, limit: 5) == [])
        }
    }

    @Test func aReleasedDeliveryIsClaimableAtOnce() async throws {
        try await withFleet { fleet in
            let descriptor = try fleet.source("given-back.pdf", Array("back".utf8))
            defer { try? descriptor.close() }
            let alpha = try fleet.queue(host: "alpha")
            let beta = try fleet.queue(host: "beta")
            let document = Self.document("given-back.pdf", descriptor, size: 4)
            try await alpha.enqueue([document])
            #expect(try await alpha.claim(handler: Self.handler, limit: 1).count == 1)
            // Only the holder gives it back.
            try await beta.release([document.deliveryID])
            #expect(try await beta.claim(handler: Self.handler, limit: 1) == [])
            try await alpha.release([document.deliveryID])
            #expect(try await alpha.tally() == FleetTally(owed: 1))
            let again = try await beta.claim(handler: Self.handler, limit: 1)
            #expect(again.map(\.deliveryID) == [document.deliveryID])
            #expect(again.first?.attempts == 2)
        }
    }

    /// What a stream yielded so far, read by the test while a task consumes it.
    final class Received: Sendable {
        let items = Mutex<[String]>([])
        var all: [String] { items.withLock { $0 } }

        func consume(_ stream: AsyncStream<String>) -> Task<Void, Never> {
            Task { for await item in stream { items.withLock { $0.append(item) } } }
        }

        /// Waits up to `seconds` for `condition` on what came; whether it held.
        func wait(seconds: Double, until condition: ([String]) -> Bool) async -> Bool {
            let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
            while ContinuousClock.now < deadline {
                if condition(all) { return true }
                try? await Task.sleep(for: .milliseconds(50))
            }
            return condition(all)
        }
    }

    @Test func anotherHostsIntakeWakesTheHandlersListener() async throws {
        try await withFleet { fleet in
            let descriptor = try fleet.source("wake.pdf", Array("wake".utf8))
            defer { try? descriptor.close() }
            let alpha = try fleet.queue(host: "alpha")
            let beta = try fleet.queue(host: "beta")
            let received = Received()
            let consumer = received.consume(beta.wakeUps())
            defer { consumer.cancel() }
            // "" first: LISTEN is in place, look at every handler.
            #expect(await received.wait(seconds: 20) { $0 == [""] }, "\(received.all)")
            try await alpha.enqueue([Self.document("wake.pdf", descriptor, size: 4), Self.document("wake.pdf", descriptor, size: 4, identity: "another", handler: "com.example.other")])
            #expect(await received.wait(seconds: 20) { $0.count == 3 }, "\(received.all)")
            #expect(Set(received.all.dropFirst()) == [Self.handler, "com.example.other"])
            // A batch rolled back wakes nobody.
            let folder = try SystemPackage.FileDescriptor.open(fleet.folder.root, .readOnly)
            defer { try? folder.close() }
            await #expect(throws: FleetError.self) { try await alpha.enqueue([Self.document("folder.pdf", folder, size: 1, handler: "com.example.never")]) }
            try await Task.sleep(for: .milliseconds(500))
            #expect(!received.all.contains("com.example.never"))
        }
    }

    @Test func aServerThatGoesAwayIsUnreachableAndTheQueueComesBackWithIt() async throws {
        try await withFleet { fleet in
            let descriptor = try fleet.source("away.pdf", Array("away".utf8))
            defer { try? descriptor.close() }
            let queue = try fleet.queue(host: "alpha")
            try await queue.enqueue([Self.document("away.pdf", descriptor, size: 4)])
            let received = Received()
            let consumer = received.consume(queue.wakeUps())
            defer { consumer.cancel() }
            #expect(await received.wait(seconds: 20) { $0 == [""] }, "\(received.all)")

            let server = fleet.server
            try await runBlocking { try server.pause() }
            await #expect {
                _ = try await queue.claim(handler: Self.handler, limit: 1)
            } throws: { error in
                (error as? FleetError)?.code == .unreachable
            }
            await #expect {
                _ = try await queue.tally()
            } throws: { error in
                (error as? FleetError)?.code == .unreachable && "\(error)".contains("no PostgreSQL answers")
            }
            try await runBlocking { try server.start() }
            // The next call connects again; the listener is back and says so with "".
            #expect(try await queue.claim(handler: Self.handler, limit: 1).count == 1)
            #expect(await received.wait(seconds: 30) { $0 == ["", ""] }, "\(received.all)")
        }
    }

    @Test func aServerThatStopsAnsweringIsUnreachableWithinALease() async throws {
        try await withFleet { fleet in
            let queue = try fleet.queue(host: "alpha", leaseSeconds: 2)
            #expect(try await queue.tally() == FleetTally())
            // The queue's server process stopped: its socket stays open and says nothing, as a
            // server cut off by the network.
            let backend = try #require(pid_t(try await fleet.sql("SELECT pid FROM pg_stat_activity WHERE usename = 'docroute'")))
            kill(backend, SIGSTOP)
            defer { kill(backend, SIGCONT) }
            let start = ContinuousClock.now
            await #expect {
                _ = try await queue.tally()
            } throws: { error in
                (error as? FleetError)?.code == .unreachable && "\(error)".contains("did not answer within lease_seconds (2 s)")
            }
            #expect(ContinuousClock.now - start < .seconds(8))
            kill(backend, SIGCONT)
            #expect(try await queue.tally() == FleetTally(), "a new connection")

            // The listener's connection stopped the same way: it is found out by its probe within
            // two leases and made anew, which it says with "".
            let received = Received()
            let consumer = received.consume(queue.wakeUps())
            defer { consumer.cancel() }
            #expect(await received.wait(seconds: 20) { $0 == [""] }, "\(received.all)")
            let listener = try #require(pid_t(try await fleet.sql("SELECT pid FROM pg_stat_activity WHERE usename = 'docroute' AND (query LIKE 'LISTEN%' OR query = 'SELECT 1')")))
            kill(listener, SIGSTOP)
            defer { kill(listener, SIGCONT) }
            #expect(await received.wait(seconds: 20) { $0 == ["", ""] }, "\(received.all)")
            kill(listener, SIGCONT)
        }
    }

    @Test func noServerAtTheAddressIsUnreachable() async throws {
        // Port 1 on loopback: nothing listens, the connection is refused at once.
        let address = try FleetDatabaseAddress.parse("postgresql://docroute@127.0.0.1:1/fleet")
        let database = try FleetDatabase(configuration: FleetConfiguration(database: address, hostName: "alpha"), password: "x")
        let queue = FleetQueue(database: database, hostName: "alpha", logger: Self.logger)
        for call in ["claim", "tally", "acknowledge"] {
            await #expect {
                switch call {
                case "claim": _ = try await queue.claim(handler: Self.handler, limit: 1)
                case "tally": _ = try await queue.tally()
                default: _ = try await queue.acknowledge([UUID()], handled: true)
                }
            } throws: { error in
                (error as? FleetError)?.code == .unreachable && "\(error)".contains("connection refused")
            }
        }
    }
}
