@testable import DocRouteDelivery
@testable import DocRoutePlatform
import DocRouteTestSupport
import Foundation
import SystemPackage
import Testing

@Suite struct QuarantineTests {
    func quarantine(_ inbox: TestInbox, _ name: String, into quarantine: Quarantine, chain: String = "", reason: String = "no handler claims it") throws -> FilePath {
        let request = try inbox.request(name, container: FilePath("/unused"), chain: chain)
        return try quarantine.quarantine(
            source: request.sourceDescriptor, sourceStatus: request.sourceStatus, sourcePath: request.sourceFilePath,
            sourceDirectory: request.sourceDirectory, sourceName: request.sourceComponent, mailbox: "Mail",
            extensionChain: chain, contentType: "dyn.ah62d4rv4ge80c7xmq2", reason: reason,
            at: Date(timeIntervalSince1970: 1_700_000_000))
    }

    @Test func aFileMovesWithItsReasonAndTakenNamesGetACounter() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let inbox = try TestInbox(scratch.path("inbox"))
        defer { inbox.close() }
        try scratch.write("inbox/strange.xyz.gz", "first")
        try scratch.write("quarantine/Mail/strange.xyz.gz", "an older one")
        try scratch.write("quarantine/Mail/strange-1.xyz.gz.reason", "a reason left without its file")
        let quarantine = Quarantine(directory: scratch.path("quarantine"), logger: Fixtures.logger)

        let path = try self.quarantine(inbox, "strange.xyz.gz", into: quarantine, chain: ".xyz.gz", reason: "no handler claims\nthis type")

        #expect(path == scratch.path("quarantine/Mail/strange-2.xyz.gz"))
        #expect(scratch.read("quarantine/Mail/strange-2.xyz.gz") == Array("first".utf8))
        let reason = String(decoding: scratch.read("quarantine/Mail/strange-2.xyz.gz.reason") ?? [], as: UTF8.self)
        #expect(reason == "no handler claims this type (content type dyn.ah62d4rv4ge80c7xmq2, quarantined 2023-11-14T22:13:20Z)\n")
        #expect(scratch.list("inbox") == [])
        #expect(scratch.list("quarantine/Mail").filter { $0.hasPrefix(".") } == [])
    }

    /// /dev/shm is a tmpfs, another file system than /tmp here: the file is copied, synced, then
    /// removed from the inbox.
    @Test func acrossFileSystemsTheFileIsCopiedThenRemoved() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let other = try TemporaryFolder("test", base: "/dev/shm")
        defer { other.remove() }
        let inbox = try TestInbox(scratch.path("inbox"))
        defer { inbox.close() }
        try scratch.write("inbox/blob.bin", Fixtures.content(9, size: 1 << 20))
        let quarantine = Quarantine(directory: other.path("quarantine"), logger: Fixtures.logger)
        let request = try inbox.request("blob.bin", container: FilePath("/unused"))
        var shm = stat()
        try #require(stat(other.root.string, &shm) == 0)
        try #require(UInt64(shm.st_dev) != request.sourceStatus.device, "/dev/shm is on the same file system here")

        let path = try self.quarantine(inbox, "blob.bin", into: quarantine, chain: ".bin")

        #expect(path == other.path("quarantine/Mail/blob.bin"))
        let sameBytes = other.read("quarantine/Mail/blob.bin") == Fixtures.content(9, size: 1 << 20)
        #expect(sameBytes)
        #expect(other.read("quarantine/Mail/blob.bin.reason")?.isEmpty == false)
        #expect(scratch.list("inbox") == [])
        #expect(other.list("quarantine/Mail") == ["blob.bin", "blob.bin.reason"])
    }

    @Test func aSourceReplacedSinceOpeningStaysInTheInbox() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let inbox = try TestInbox(scratch.path("inbox"))
        defer { inbox.close() }
        try scratch.write("inbox/x.bin", "old")
        let request = try inbox.request("x.bin", container: FilePath("/unused"))
        try FileManager.default.removeItem(atPath: scratch.path("inbox/x.bin").string)
        try scratch.write("inbox/x.bin", "new, unseen")
        let quarantine = Quarantine(directory: scratch.path("quarantine"), logger: Fixtures.logger)

        #expect {
            try quarantine.quarantine(
                source: request.sourceDescriptor, sourceStatus: request.sourceStatus, sourcePath: request.sourceFilePath,
                sourceDirectory: request.sourceDirectory, sourceName: request.sourceComponent, mailbox: "Mail",
                contentType: nil, reason: "test")
        } throws: { ($0 as? DeliveryError)?.code == .changed }
        #expect(scratch.read("inbox/x.bin") == Array("new, unseen".utf8))
    }
}
