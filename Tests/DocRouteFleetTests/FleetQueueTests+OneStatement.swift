import DocRouteFleet
import Foundation
import SystemPackage
import Testing

extension FleetQueueTests {
    @Test func smallDocumentsCommittedInOneStatementAreCopiedByteForByteAndWakeTheListener() async throws {
        try await withFleet { fleet in
            let contents: [(String, [UInt8])] = [
                ("empty.pdf", []),
                ("small.pdf", Array("%PDF-1.4 small".utf8)),
                ("one-chunk.pdf", Self.bytes(FleetQueue.chunkSize, seed: 3)),
            ]
            var documents: [FleetDocument] = []
            for (name, bytes) in contents {
                documents.append(Self.document(name, try fleet.source(name, bytes), size: bytes.count))
            }
            defer { for document in documents { try? document.descriptor.close() } }
            #expect(FleetQueue.fitsOneStatement(documents))
            let alpha = try fleet.queue(host: "alpha")
            let beta = try fleet.queue(host: "beta")
            let received = Received()
            let consumer = received.consume(beta.wakeUps())
            defer { consumer.cancel() }
            #expect(await received.wait(seconds: 20) { $0 == [""] }, "\(received.all)")

            let answer = try await alpha.commitInOneStatement(documents, lookingUp: documents.map(\.sourceIdentity))
            #expect(answer.earlier.isEmpty)
            #expect(answer.committed == Set(documents.map(\.deliveryID)))
            #expect(await received.wait(seconds: 20) { $0.count == 2 }, "\(received.all)")
            #expect(received.all.last == Self.handler)
            #expect(try await fleet.sql("SELECT count(*) FROM history_events WHERE event = 'committed'") == "3")

            let claims = try await beta.claim(handler: Self.handler, limit: 10)
            #expect(claims.map(\.deliveryID) == documents.map(\.deliveryID), "in the batch's order")
            for (claim, (name, bytes)) in zip(claims, contents) {
                #expect(claim.fileName == name && claim.size == Int64(bytes.count) && claim.intakeHost == "alpha")
                #expect(try await fleet.copy(claim, from: beta) == bytes, "\(name)")
            }
        }
    }

    @Test func aSourceCommittedBeforeIsFoundByTheOneStatementAndNotWrittenAgain() async throws {
        try await withFleet { fleet in
            let descriptor = try fleet.source("again.pdf", Array("again".utf8))
            defer { try? descriptor.close() }
            let queue = try fleet.queue(host: "alpha")
            let first = Self.document("again.pdf", descriptor, size: 5, identity: "alpha 1:2 5 0 /inbox/again.pdf")
            let other = Self.document("again.pdf", descriptor, size: 5, identity: "alpha 1:3 5 0 /inbox/other.pdf")
            _ = try await queue.commitInOneStatement([first], lookingUp: [first.sourceIdentity])
            // After a crash between the commit and the source's removal, intake offers it again,
            // under a new delivery id, beside a source never seen and an identity only looked up.
            let again = Self.document("again.pdf", descriptor, size: 5, identity: first.sourceIdentity)
            let answer = try await queue.commitInOneStatement([again, other], lookingUp: [first.sourceIdentity, other.sourceIdentity, "alpha 0:0 0 0 /never"])
            #expect(answer.earlier == [first.sourceIdentity: first.deliveryID])
            #expect(answer.committed == [other.deliveryID])
            #expect(try await fleet.sql("SELECT count(*) FROM deliveries") == "2")
            #expect(try await fleet.sql("SELECT count(*) FROM document_chunks") == "2")
        }
    }

    @Test func aDocumentLargerThanAChunkOrTooManyBytesTogetherTakeTheTransaction() throws {
        let descriptor = SystemPackage.FileDescriptor(rawValue: -1)
        #expect(!FleetQueue.fitsOneStatement([Self.document("big.pdf", descriptor, size: FleetQueue.chunkSize + 1)]))
        let many = (0..<17).map { Self.document("part\($0).pdf", descriptor, size: FleetQueue.chunkSize) }
        #expect(!FleetQueue.fitsOneStatement(many), "17 MiB together")
        #expect(FleetQueue.fitsOneStatement(Array(many.prefix(16))))
    }
}

extension FleetQueueTests {
    @Test func aClaimBringsTheBytesOfDocumentsOfOneChunk() async throws {
        try await withFleet { fleet in
            let contents: [(String, [UInt8])] = [
                ("empty.pdf", []),
                ("small.pdf", Array("%PDF-1.4 small".utf8)),
                ("two-chunks.pdf", Self.bytes(FleetQueue.chunkSize + 1, seed: 4)),
            ]
            var documents: [FleetDocument] = []
            for (name, bytes) in contents {
                documents.append(Self.document(name, try fleet.source(name, bytes), size: bytes.count))
            }
            defer { for document in documents { try? document.descriptor.close() } }
            try await fleet.queue(host: "alpha").enqueue(documents)
            let claims = try await fleet.queue(host: "beta").claim(handler: Self.handler, limit: 10)
            #expect(claims.map(\.fileName) == contents.map(\.0))
            #expect(claims.map(\.contents) == [nil, contents[1].1, nil], "an empty one needs none, a larger one is copied a chunk at a time")
        }
    }
}
