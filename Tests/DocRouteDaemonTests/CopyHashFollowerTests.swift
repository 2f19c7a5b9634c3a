@testable import DocRouteDelivery
import DocRouteTestSupport
import Foundation
import SystemPackage
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The thread that hashes a large copy a step behind the kernel: its digest is `sha256sum`'s of
/// the bytes reported copied, whatever the steps (the kernel's copies can end anywhere, not on a
/// page), through mappings or, where the kernel cannot populate one, with `pread`.
@Suite struct CopyHashFollowerTests {
    @Test(arguments: [true, false])
    func theDigestIsThatOfEveryByteReportedCopied(mapsPages: Bool) throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let size = 2 * CopyHashFollower.window + 3 * 4096 + 17
        try scratch.write("copy.bin", Fixtures.content(11, size: size))
        let folder = try FileDescriptor.openDirectory(atPath: scratch.root)
        defer { folder.closeIgnoringErrors() }
        let copy = try folder.open(FilePath.Component("copy.bin"), flags: O_RDONLY)
        defer { copy.closeIgnoringErrors() }

        let follower = CopyHashFollower(copy: copy, path: "copy.bin", mapsPages: mapsPages)
        // Steps that end off a page, one larger than the window, then the rest.
        for offset in [1, 4095, 4096 + 1_000, CopyHashFollower.window + 8_193, size] {
            follower.copied(upTo: Int64(offset))
        }
        follower.finish()
        let (digest, hashed) = try follower.digest()

        #expect(hashed == Int64(size))
        #expect(digest == (try Self.sha256sum(scratch.path("copy.bin").string)))
    }

    /// coreutils' `sha256sum` of a file: the digest as the field computes it.
    static func sha256sum(_ path: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        process.arguments = [path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        process.waitUntilExit()
        return String(String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).prefix(64))
    }
}
