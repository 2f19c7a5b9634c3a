@testable import DocRouteDelivery
@testable import DocRoutePlatform
import DocRouteTestSupport
import Foundation
import Logging
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Package trees are walked iteratively, so no depth overflows the stack, and
/// the limits are found before anything is copied.
@Suite struct PackageTreeDepthTests {
    /// A temporary folder holding `levels` nested folders `a/…/a`, a file at the bottom.
    func deepTree(levels: Int) throws -> (root: String, top: CInt) {
        // Removed by the tests themselves, through PackageTree.remove: that is part of what they check.
        let root = try TemporaryFolder("deep").string
        #expect(mkdir(root + "/src", 0o755) == 0 && mkdir(root + "/dst", 0o755) == 0)
        var folder = open(root + "/src", O_RDONLY | O_DIRECTORY)
        for _ in 0..<levels {
            #expect(mkdirat(folder, "a", 0o755) == 0)
            let child = openat(folder, "a", O_RDONLY | O_DIRECTORY)
            close(folder)
            folder = child
        }
        let file = openat(folder, "bottom.txt", O_WRONLY | O_CREAT, 0o644)
        _ = write(file, "bottom\n", 7)
        close(file)
        close(folder)
        return (root, open(root + "/src", O_RDONLY | O_DIRECTORY))
    }

    @Test func limitsAreFoundWithoutCopying() throws {
        let (root, top) = try deepTree(levels: 300)
        defer { close(top); try? PackageTree.remove(Array("src".utf8), in: open(root, O_RDONLY | O_DIRECTORY), describing: root + "/src"); rmdir(root + "/dst"); rmdir(root) }
        #expect(try PackageTree.exceeded(.init(maxDepth: 300, maxEntries: 1_000), in: top, describing: "src") == nil)
        #expect(try PackageTree.exceeded(.init(maxDepth: 299, maxEntries: 1_000), in: top, describing: "src")?.contains("max_package_depth") == true)
        #expect(try PackageTree.exceeded(.init(maxDepth: 1_000, maxEntries: 100), in: top, describing: "src")?.contains("max_package_entries") == true)
    }

    /// What the deep copy found, checked by the test on its own task.
    struct DeepCopy: Sendable {
        var copied: Int64
        var sourceSize: Int64
        var digestsMatch: Bool
        var limitError: String?
        var removedEveryLevel: Bool
    }

    /// Thousands of levels, each its own folder copied and synced (the daemon's recursive walk
    /// overflowed its thread's stack at 10,000; `make chaos` sends the daemon that many).
    ///
    /// Tens of seconds of blocking system calls on a loaded machine: they run on a thread of their
    /// own (`runBlocking`), not on the cooperative pool, whose two threads the async tests beside
    /// this one need (a test holding one for 40 s stalled every timed test of the run).
    @Test func aDeepTreeIsCopiedHashedAndRemovedWithoutRecursion() async throws {
        let levels = 3_000
        let (root, top) = try deepTree(levels: levels)
        let outcome = try await runBlocking { try Self.copyDeepTree(root: root, top: top, levels: levels) }
        #expect(outcome.copied == 7)
        #expect(outcome.sourceSize == 7 && outcome.digestsMatch)
        #expect(outcome.limitError?.contains("more than 10 levels deep") == true, "\(outcome.limitError ?? "no error")")
        #expect(outcome.removedEveryLevel, "removed, every level")
    }

    static func copyDeepTree(root: String, top: CInt, levels: Int) throws -> DeepCopy {
        let rootFD = open(root, O_RDONLY | O_DIRECTORY)
        defer {
            close(top)
            try? PackageTree.remove(Array("src".utf8), in: rootFD, describing: root + "/src")
            try? PackageTree.remove(Array("dst".utf8), in: rootFD, describing: root + "/dst")
            try? PackageTree.remove(Array("dst2".utf8), in: rootFD, describing: root + "/dst2")
            close(rootFD)
            rmdir(root)
        }
        let destination = open(root + "/dst", O_RDONLY | O_DIRECTORY)
        defer { close(destination) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 4096)
        defer { buffer.deallocate() }
        let copied = try PackageTree.copy(from: top, describing: "src", to: destination, describing: "dst", owner: nil,
                                          fileMode: 0o644, folderMode: 0o755, buffer: buffer,
                                          limits: .init(maxDepth: levels, maxEntries: .max), logger: Fixtures.logger)
        let source = try PackageTree.digest(of: top, describing: "src")
        let copy = try PackageTree.digest(of: destination, describing: "dst")
        guard mkdir(root + "/dst2", 0o755) == 0 else { throw TestSupportError("cannot create \(root)/dst2") }
        let second = open(root + "/dst2", O_RDONLY | O_DIRECTORY)
        defer { close(second) }
        var limitError: String?
        do {
            _ = try PackageTree.copy(from: top, describing: "src", to: second, describing: "dst2", owner: nil,
                                     fileMode: 0o644, folderMode: 0o755, buffer: buffer,
                                     limits: .init(maxDepth: 10, maxEntries: .max), logger: Fixtures.logger)
        } catch let error as DeliveryError {
            limitError = error.message
        }
        try PackageTree.remove(Array("dst".utf8), in: rootFD, describing: root + "/dst")
        var info = stat()
        return DeepCopy(copied: Int64(copied), sourceSize: Int64(source.size), digestsMatch: source.sha256 == copy.sha256,
                        limitError: limitError, removedEveryLevel: lstat(root + "/dst", &info) != 0)
    }
}
