import DocRouteTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `docroutectl bookmark resolve` with bookmark data someone wrote by hand: it resolves only in a
/// container the caller names or owns, never on an empty digest.
@Suite struct BookmarkIntegrationTests {
    /// Bookmark data naming `container` and `path`, with the identities `stat` shows.
    static func crafted(container: String, path: String, digest: String = "") throws -> String {
        try CraftedBookmark.data(container: container, path: path, digest: digest, version: 1).base64EncodedString()
    }

    @Test func aBookmarkNamingTheRootFolderDoesNotResolveASystemFile() throws {
        let data = try Self.crafted(container: "/", path: "etc/passwd")
        let resolved = try CtlProcess.run(["bookmark", "resolve", data])
        #expect(resolved.status == 1, "\(resolved.output)\(resolved.error)")
        #expect(!resolved.output.contains("/etc/passwd"), "\(resolved.output)")
        #expect(resolved.error.contains("not-in-container") || resolved.error.contains("other-container"), "\(resolved.error)")
    }

    @Test func aBookmarkOfADeletedEmptyFileDoesNotResolveToAnotherEmptyFile() throws {
        let folder = try TemporaryFolder("bm")
        defer { folder.remove() }
        let container = folder.string + "/c"
        try FileManager.default.createDirectory(atPath: container + "/Documents/Inbox/Mail", withIntermediateDirectories: true)
        let document = container + "/Documents/Inbox/Mail/empty.txt"
        #expect(FileManager.default.createFile(atPath: document, contents: Data()))
        let made = try CtlProcess.run(["bookmark", "create", document])
        #expect(made.status == 0, "\(made.error)")
        // Made before the document goes, so it cannot be given the document's inode number.
        #expect(FileManager.default.createFile(atPath: container + "/Documents/other.txt", contents: Data()))
        #expect(unlink(document) == 0)
        let resolved = try CtlProcess.run(["bookmark", "resolve", made.output.trimmingCharacters(in: .whitespacesAndNewlines)])
        #expect(resolved.status == 1 && resolved.error.contains("not-found"), "\(resolved.output)\(resolved.error)")
        #expect(!resolved.output.contains("other.txt"), "\(resolved.output)")
    }
}
