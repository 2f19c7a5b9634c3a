import DocRouteClient
import DocRouteTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Bookmarks find a delivered document again inside its container, and nowhere else.
@Suite struct DocumentBookmarkTests {
    /// A container with a delivered document: `<root>/c/Documents/Inbox/Mail/1abc.pdb`.
    struct Fixture {
        let folder: TemporaryFolder
        let root: String
        let container: String
        let document: String
        let content: [UInt8]

        init(size: Int = 6000) throws {
            folder = try TemporaryFolder("bm")
            root = folder.string
            container = root + "/c"
            try FileManager.default.createDirectory(atPath: container + "/Documents/Inbox/Mail", withIntermediateDirectories: true)
            document = container + "/Documents/Inbox/Mail/1abc.pdb"
            content = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            try Data(content).write(to: URL(fileURLWithPath: document))
        }

        func remove() { folder.remove() }

        func bookmark() throws -> DocumentBookmark {
            // Through its data, as a handler stores it across restarts.
            try DocumentBookmark(data: DocumentBookmark(url: URL(fileURLWithPath: document)).data)
        }
    }

    @Test func theContainerIsTheFolderHoldingDocuments() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let bookmark = try fixture.bookmark()
        #expect(bookmark.containerURL.path == fixture.container)
        #expect(bookmark.relativePath == "Documents/Inbox/Mail/1abc.pdb")
        let found = try bookmark.resolve()
        #expect(found.url.path == fixture.document && !found.isStale)
    }

    @Test func aRenamedDocumentIsFoundByInode() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let bookmark = try fixture.bookmark()
        let renamed = fixture.container + "/Documents/Inbox/Mail/renamed.pdb"
        #expect(rename(fixture.document, renamed) == 0)
        let found = try bookmark.resolve()
        #expect(found.url.path == renamed && found.isStale)
    }

    @Test func aDocumentMovedToAnotherFolderOfTheContainerIsFound() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let bookmark = try fixture.bookmark()
        try FileManager.default.createDirectory(atPath: fixture.container + "/Library/Kept", withIntermediateDirectories: true)
        let moved = fixture.container + "/Library/Kept/molecule.pdb"
        #expect(rename(fixture.document, moved) == 0)
        let found = try bookmark.resolve()
        #expect(found.url.path == moved && found.isStale)
    }

    @Test func anEditInPlaceKeepsTheBookmarkCurrent() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let bookmark = try fixture.bookmark()
        let handle = try #require(FileHandle(forWritingAtPath: fixture.document))
        handle.seekToEndOfFile()
        handle.write(Data("appended\n".utf8))
        try handle.close()
        let found = try bookmark.resolve()
        #expect(found.url.path == fixture.document && !found.isStale)
    }

    @Test func anEditThatReplacesTheFileByRenameIsFoundByDigest() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let bookmark = try fixture.bookmark()
        // An editor's save: a new file (new inode), same size and first bytes, renamed over the
        // old one, and then the document renamed as well.
        var edited = fixture.content
        edited[edited.count - 1] ^= 0xFF
        let temporary = fixture.container + "/Documents/.1abc.pdb.tmp"
        try Data(edited).write(to: URL(fileURLWithPath: temporary))
        #expect(rename(temporary, fixture.document) == 0)
        let renamed = fixture.container + "/Documents/edited.pdb"
        #expect(rename(fixture.document, renamed) == 0)
        let found = try bookmark.resolve()
        #expect(found.url.path == renamed && found.isStale)
    }

    @Test func aDeletedDocumentIsClearlyNotFound() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let bookmark = try fixture.bookmark()
        #expect(unlink(fixture.document) == 0)
        #expect {
            try bookmark.resolve()
        } throws: { error in
            guard let error = error as? DocumentBookmarkError else { return false }
            return error.code == .notFound && error.message.contains("is gone")
        }
    }

    @Test func aBookmarkHandedToAnotherContainerIsRefused() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let bookmark = try fixture.bookmark()
        // Another handler's container with a file at the same relative path.
        let other = fixture.root + "/other"
        try FileManager.default.createDirectory(atPath: other + "/Documents/Inbox/Mail", withIntermediateDirectories: true)
        try Data(fixture.content).write(to: URL(fileURLWithPath: other + "/Documents/Inbox/Mail/1abc.pdb"))
        #expect {
            try bookmark.resolve(container: URL(fileURLWithPath: other))
        } throws: { error in
            (error as? DocumentBookmarkError)?.code == .otherContainer
        }
    }

    @Test func resolutionThroughASymbolicLinkIsRefused() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let bookmark = try fixture.bookmark()
        // The document leaves the container; a link to it stands at its old path.
        let outside = fixture.root + "/outside.pdb"
        #expect(rename(fixture.document, outside) == 0)
        #expect(symlink(outside, fixture.document) == 0)
        #expect {
            try bookmark.resolve()
        } throws: { error in
            (error as? DocumentBookmarkError)?.code == .symbolicLink
        }
        // A folder of the path replaced by a link out of the container: refused as well.
        #expect(unlink(fixture.document) == 0)
        try FileManager.default.createDirectory(atPath: fixture.root + "/elsewhere", withIntermediateDirectories: true)
        #expect(rename(outside, fixture.root + "/elsewhere/1abc.pdb") == 0)
        try FileManager.default.removeItem(atPath: fixture.container + "/Documents/Inbox/Mail")
        #expect(symlink(fixture.root + "/elsewhere", fixture.container + "/Documents/Inbox/Mail") == 0)
        #expect {
            try bookmark.resolve()
        } throws: { error in
            (error as? DocumentBookmarkError)?.code == .symbolicLink
        }
    }

    @Test func aFileReferenceURLResolvesWithinTheContainerWhileTheFileExists() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let reference = try DocumentBookmark.fileReferenceURL(for: URL(fileURLWithPath: fixture.document))
        #expect(reference.absoluteString.hasPrefix("file:///.file/id="))
        let moved = fixture.container + "/Documents/moved.pdb"
        #expect(rename(fixture.document, moved) == 0)
        let container = URL(fileURLWithPath: fixture.container)
        #expect(try DocumentBookmark.resolveFileReference(reference, in: container).path == moved)
        #expect(unlink(moved) == 0)
        #expect(throws: DocumentBookmarkError.self) { try DocumentBookmark.resolveFileReference(reference, in: container) }
    }

    @Test func dataOfAnotherVersionOrNoBookmarkIsRefused() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        var data = try fixture.bookmark().data
        data[4] = 9
        #expect { try DocumentBookmark(data: data) } throws: { error in
            (error as? DocumentBookmarkError).map { $0.code == .invalidData && $0.message.contains("version 9") } ?? false
        }
        #expect(throws: DocumentBookmarkError.self) { try DocumentBookmark(data: Data("hello".utf8)) }
        #expect(throws: DocumentBookmarkError.self) { try DocumentBookmark(url: URL(fileURLWithPath: "/etc/hostname")) }
    }

    /// Bookmark data as an attacker writes it: any container, any path, with the identities it
    /// can read from `stat`.
    static func crafted(container: String, path: String) throws -> Data {
        try CraftedBookmark.data(container: container, path: path, version: UInt8(DocumentBookmark.version))
    }

    @Test func aCraftedBookmarkNamingTheRootFolderResolvesNothingThere() throws {
        let bookmark = try DocumentBookmark(data: Self.crafted(container: "/", path: "etc/passwd"))
        var resolved: String?
        #expect {
            resolved = try bookmark.resolve().url.path
        } throws: { error in
            (error as? DocumentBookmarkError).map { [.notInContainer, .otherContainer].contains($0.code) } ?? false
        }
        #expect(resolved == nil, "resolved outside any container: \(resolved ?? "")")
    }

    @Test(.enabled(if: geteuid() == 0, "giving the container to another user needs root"))
    func withoutANamedContainerOnlyTheCallersOwnContainerIsSearched() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let bookmark = try fixture.bookmark()
        // The container belongs to another user now (as another handler's does).
        #expect(chown(fixture.container, 4242, 4242) == 0)
        #expect {
            try bookmark.resolve()
        } throws: { error in
            (error as? DocumentBookmarkError).map { $0.code == .otherContainer && $0.message.contains("--container") } ?? false
        }
        // Named by the caller, it resolves there.
        let found = try bookmark.resolve(container: URL(fileURLWithPath: fixture.container))
        #expect(found.url.path == fixture.document && !found.isStale)
    }

    @Test func aDeletedEmptyDocumentIsNotFoundInAnotherEmptyFile() throws {
        let fixture = try Fixture(size: 0)
        defer { fixture.remove() }
        let bookmark = try fixture.bookmark()
        // Another empty file in the container: same size, same (empty) digest, not the document
        // (made before the document goes, so it cannot be given the document's inode number).
        #expect(FileManager.default.createFile(atPath: fixture.container + "/Documents/notes.txt", contents: Data()))
        #expect(unlink(fixture.document) == 0)
        var resolved: String?
        #expect {
            resolved = try bookmark.resolve().url.path
        } throws: { error in
            (error as? DocumentBookmarkError)?.code == .notFound
        }
        #expect(resolved == nil, "an empty file matched: \(resolved ?? "")")
    }
}
