@testable import DocRouteDelivery
import DocRouteTestSupport
import Foundation
import SystemPackage
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A handler's container is its own (0700 folders, 0600 files, and
/// an ACL entry for docrouted alone when it is not root), and every write stays inside it even
/// when the handler moves its mailbox folder away in the middle of a batch.
@Suite struct SandboxConfinementTests {
    let mailbox = "Documents/Inbox/Mail"

    /// Runs `command` as `uid`:`gid` with no supplementary groups; its exit status.
    static func run(as uid: UInt32, gid: UInt32, _ command: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = ["--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", "--"] + command
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// docrouted not running as root hands the copy and the folders it makes to the handler and
    /// keeps access for its own uid only: a member of its group (the admin group) reads nothing.
    @Test(.enabled(if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
                   "giving files to other users and testing as them needs root and setpriv"))
    func theDaemonKeepsAccessByItsOwnUidAndTheAdminGroupGetsNone() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let container = try scratch.folder("containers/com.example.viewer")
        // Modes set, not left to the umask: a test running beside this one may hold the process's
        // umask at 077 meanwhile (MetricsTextfileTests), and other users must pass through these.
        for folder in [scratch.root, scratch.path("containers"), container] { chmod(folder.string, 0o755) }
        let inbox = try TestInbox(scratch.path("inbox"))
        defer { inbox.close() }
        try scratch.write("inbox/a.txt", "a document")
        let daemon: UInt32 = 48_124, handler: UInt32 = 48_125, adminMember: UInt32 = 48_126
        let batch = DeliveryBatch(ledger: try Fixtures.ledger(scratch), accessUserID: daemon, logger: Fixtures.logger)
        var request = try inbox.request("a.txt", container: container)
        request.owner = (handler, handler)
        #expect(batch.deliver([request]).first?.error == nil)

        let file = container.appending("\(mailbox)/a.txt").string
        var status = stat()
        #expect(stat(file, &status) == 0)
        #expect((status.st_uid, status.st_gid) == (handler, handler))
        #expect(status.st_mode & 0o007 == 0, "nothing for others")
        // The daemon's uid reads the copy (recovery checks its digest) and lists the mailbox...
        #expect(try Self.run(as: daemon, gid: daemon, ["/bin/cat", file]) == 0)
        #expect(try Self.run(as: daemon, gid: daemon, ["/bin/ls", container.appending(mailbox).string]) == 0)
        // ...a member of the daemon's group (the admin group, the mail delivery agent) does not,
        // and cannot plant a file in the mailbox.
        #expect(try Self.run(as: adminMember, gid: daemon, ["/bin/cat", file]) != 0)
        #expect(try Self.run(as: adminMember, gid: daemon, ["/bin/ls", container.appending(mailbox).string]) != 0)
        #expect(try Self.run(as: adminMember, gid: daemon, ["/usr/bin/touch", container.appending("\(mailbox)/planted").string]) != 0)
        #expect(try Self.run(as: adminMember, gid: handler, ["/bin/cat", file]) != 0, "not even the handler's group")
        #expect(try Self.run(as: handler, gid: handler, ["/bin/cat", file]) == 0, "the handler reads its document")
        for folder in ["Documents", "Documents/Inbox", mailbox] {
            #expect(stat(container.appending(folder).string, &status) == 0)
            #expect((status.st_uid, status.st_gid) == (handler, handler), "\(folder)")
            #expect(status.st_mode & 0o007 == 0, "\(folder)")
        }
    }

    @Test func theAccessListIsTheKernelsBinaryForm() {
        let bytes = FileDescriptor.accessListBytes(ownerPermissions: 6, userID: 1000, userPermissions: 4)
        #expect(bytes.count == 4 + 5 * 8)
        #expect(Array(bytes[0..<4]) == [2, 0, 0, 0], "version 2, little-endian")
        #expect(Array(bytes[12..<20]) == [0x02, 0, 4, 0, 0xE8, 0x03, 0, 0], "ACL_USER r-- for uid 1000")
    }

    /// The handler moves its mailbox out of its container after the second copy of a batch. The
    /// folder is looked up again every `copiesBetweenFolderChecks` copies: the copies up to that
    /// look went to the moved folder and are taken back (their sources stay, to be delivered
    /// again), the later ones go to a mailbox made anew inside the container, and no ledger row
    /// names a path outside the container.
    @Test func aMailboxMovedAwayMidBatchGetsNoMoreCopies() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let container = try scratch.folder("containers/com.example.viewer")
        try scratch.folder("containers/com.example.viewer/\(mailbox)")
        let inbox = try TestInbox(scratch.path("inbox"))
        defer { inbox.close() }
        let checkEvery = DeliveryBatch.Options().copiesBetweenFolderChecks
        let names = (0..<(checkEvery + 8)).map { String(format: "doc-%03d.txt", $0) }
        for (index, name) in names.enumerated() { try scratch.write("inbox/\(name)", Fixtures.content(index, size: 1000)) }
        let ledger = try Fixtures.ledger(scratch)
        let batch = DeliveryBatch(ledger: ledger, logger: Fixtures.logger)
        let requests = try names.map { try inbox.request($0, container: container) }
        let moved = scratch.path("moved-away").string

        let outcomes = batch.deliver(requests, stoppingAfter: nil, afterEachCopy: { index in
            if index == 1 { rename(container.appending(mailbox).string, moved) }
        })

        #expect(scratch.list("moved-away").filter { !$0.hasPrefix(".") } == [], "nothing placed in the moved folder")
        #expect(scratch.list("moved-away") == [], "its temporaries removed too")
        let delivered = scratch.list("containers/com.example.viewer/\(mailbox)")
        #expect(delivered == Array(names[checkEvery...]), "copies after the next look in the new mailbox")
        let turnedBack = outcomes[..<checkEvery]
        #expect(turnedBack.allSatisfy { $0.error?.code == .moved }, "\(turnedBack.map { $0.error?.description ?? "ok" })")
        #expect(outcomes[0].error?.isRetryable == true)
        #expect(scratch.list("inbox") == Array(names[..<checkEvery]), "their sources wait to be delivered again")
        for record in try ledger.pending(bundleIdentifier: "com.example.viewer") {
            #expect(record.finalPath?.hasPrefix(container.string + "/") == true, "\(record.finalPath ?? "")")
            #expect(FileManager.default.fileExists(atPath: record.finalPath ?? ""), "\(record.finalPath ?? "")")
        }

        // Tried again, they arrive inside the container.
        let again = try names[..<checkEvery].map { try inbox.request($0, container: container) }
        #expect(batch.deliver(again).compactMap(\.error).isEmpty)
        #expect(scratch.list("containers/com.example.viewer/\(mailbox)") == names)
        #expect(try ledger.pendingCount(bundleIdentifier: "com.example.viewer") == names.count)
    }

    /// Moved after the copies, before their renames: nothing lands in the moved folder either.
    @Test func aMailboxMovedBeforeTheRenamesGetsNothing() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let container = try scratch.folder("containers/com.example.viewer")
        let inbox = try TestInbox(scratch.path("inbox"))
        defer { inbox.close() }
        try scratch.write("inbox/a.txt", "a")
        try scratch.write("inbox/b.txt", "b")
        let ledger = try Fixtures.ledger(scratch)
        let batch = DeliveryBatch(ledger: ledger, logger: Fixtures.logger)
        let requests = try ["a.txt", "b.txt"].map { try inbox.request($0, container: container) }
        let outcomes = batch.deliver(requests, stoppingAfter: nil, beforePlacing: {
            rename(container.appending(self.mailbox).string, scratch.path("moved-away").string)
        })
        #expect(outcomes.allSatisfy { $0.error?.code == .moved })
        #expect(scratch.list("moved-away") == [])
        #expect(scratch.list("inbox") == ["a.txt", "b.txt"])
        #expect(try ledger.pendingCount(bundleIdentifier: "com.example.viewer") == 0)
    }
}
