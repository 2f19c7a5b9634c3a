import Foundation
import SystemPackage
import Testing
import DocRouteTestSupport
@testable import DocRouteDelivery
import DocRoutePlatform

#if canImport(Glibc)
import Glibc
#endif

/// The platform layer: system calls on `FileDescriptor` that throw the `Errno` they failed with.
@Suite struct FileDescriptorSyscallsTests {
    @Test func openingANameThatIsNotThereThrowsNoSuchFile() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let folder = try FileDescriptor.openDirectory(atPath: scratch.root)
        defer { folder.closeIgnoringErrors() }
        #expect(throws: Errno.noSuchFileOrDirectory) {
            try folder.open(FilePath.Component("missing.pdf"), flags: O_RDONLY)
        }
        #expect(throws: Errno.noSuchFileOrDirectory) {
            try FileDescriptor.openDirectory(atPath: scratch.path("missing"))
        }
        // Where absence is an answer, it is one, not an error.
        #expect(try folder.status(of: FilePath.Component("missing.pdf")) == nil)
        #expect(try folder.unlink(FilePath.Component("missing.pdf")) == false)
    }

    /// `getrandom(2)` in bulk: a buffer larger than one call's usual share is filled, and two
    /// fills differ.
    @Test func randomBytesFillTheWholeBuffer() throws {
        var first = [UInt8](repeating: 0, count: 4096)
        var second = [UInt8](repeating: 0, count: 4096)
        // (A typed-throws closure passed to withUnsafeMutableBytes crashes Swift 6.3's IRGen.)
        try first.withUnsafeMutableBytes { buffer in Result { () throws(Errno) in try RandomBytes.fill(buffer) } }.get()
        try second.withUnsafeMutableBytes { buffer in Result { () throws(Errno) in try RandomBytes.fill(buffer) } }.get()
        #expect(first != second)
        // 4,096 random bytes hold every byte value almost surely; a buffer left partly unfilled
        // would be zero at its end.
        #expect(Set(first).count > 200 && first.suffix(64).contains { $0 != 0 })
    }

    @Test func aSymbolicLinkIsNeverFollowed() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        try scratch.write("target.pdf", "%PDF-1.7")
        try scratch.folder("target-folder")
        try FileManager.default.createSymbolicLink(atPath: scratch.path("link.pdf").string, withDestinationPath: "target.pdf")
        try FileManager.default.createSymbolicLink(atPath: scratch.path("link-folder").string, withDestinationPath: "target-folder")
        let folder = try FileDescriptor.openDirectory(atPath: scratch.root)
        defer { folder.closeIgnoringErrors() }

        #expect(throws: Errno.tooManySymbolicLinkLevels) {
            try folder.open(FilePath.Component("link.pdf"), flags: O_RDONLY)
        }
        // Opened as a folder (O_DIRECTORY), a link is refused as "not a folder": Linux checks
        // O_DIRECTORY before O_NOFOLLOW, whatever the link points to.
        #expect(throws: Errno.notDirectory) {
            try folder.openDirectory(FilePath.Component("link-folder"))
        }
        #expect(throws: Errno.notDirectory) {
            try FileDescriptor.openDirectory(atPath: scratch.path("link-folder"))
        }
        // fstatat reports the link itself.
        let status = try #require(try folder.status(of: FilePath.Component("link.pdf")))
        #expect(status.isSymbolicLink)
        #expect(!status.isRegularFile)
    }

    @Test func openBeneathRefusesALinkOnTheWay() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        try scratch.folder("real/inner")
        try FileManager.default.createSymbolicLink(atPath: scratch.path("linked").string, withDestinationPath: "real")
        let folder = try FileDescriptor.openDirectory(atPath: scratch.root)
        defer { folder.closeIgnoringErrors() }
        // nil only where the kernel has no openat2; then there is nothing to check here.
        guard let inner = try folder.openBeneath("real/inner", flags: O_RDONLY | O_DIRECTORY) else { return }
        inner.closeIgnoringErrors()
        #expect(throws: Errno.tooManySymbolicLinkLevels) {
            try folder.openBeneath("linked/inner", flags: O_RDONLY | O_DIRECTORY)
        }
        #expect(throws: Errno.tooManySymbolicLinkLevels) {
            try folder.openBeneath("real/../../", flags: O_RDONLY | O_DIRECTORY)
        }
    }

    @Test func aListingReportsItsErrorInsteadOfLookingEmpty() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        try scratch.write("note.txt", "not a folder")
        let folder = try FileDescriptor.openDirectory(atPath: scratch.root)
        defer { folder.closeIgnoringErrors() }
        let file = try folder.open(FilePath.Component("note.txt"), flags: O_RDONLY)
        defer { file.closeIgnoringErrors() }
        #expect(throws: Errno.notDirectory) { try file.directoryEntries() }
    }

    @Test func aListingGivesEveryNameAndWhichAreFolders() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        try scratch.write("a.pdf", "%PDF")
        try scratch.folder("Mailbox")
        try FileManager.default.createSymbolicLink(atPath: scratch.path("link").string, withDestinationPath: "Mailbox")
        let folder = try FileDescriptor.openDirectory(atPath: scratch.root)
        defer { folder.closeIgnoringErrors() }
        // A name that is not UTF-8 comes back byte for byte.
        let latin1: [UInt8] = Array("caf".utf8) + [0xE9]
        let odd = try #require(PackageTree.component(latin1))
        try folder.open(odd, flags: O_WRONLY | O_CREAT | O_EXCL).closeIgnoringErrors()

        let entries = try folder.directoryEntries().sorted { $0.nameBytes.lexicographicallyPrecedes($1.nameBytes) }
        #expect(entries.map { $0.nameBytes } == [Array("Mailbox".utf8), Array("a.pdf".utf8), latin1, Array("link".utf8)])
        #expect(entries.map { $0.isDirectory } == [true, false, false, false])
        // The caller's descriptor is untouched: listing again gives the same.
        #expect(try folder.directoryNames().count == 4)
    }

    @Test func namesAreCreatedRenamedAndRemovedOnlyAsAsked() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let folder = try FileDescriptor.openDirectory(atPath: scratch.root)
        defer { folder.closeIgnoringErrors() }
        let box = FilePath.Component("box"), one = FilePath.Component("one"), two = FilePath.Component("two")
        #expect(try folder.makeDirectory(box, permissions: 0o700) == true)
        #expect(try folder.makeDirectory(box, permissions: 0o700) == false)
        #expect(throws: Errno.fileExists) { try folder.open(box, flags: O_WRONLY | O_CREAT | O_EXCL) }

        let file = try folder.open(one, flags: O_RDWR | O_CREAT | O_EXCL, permissions: 0o600)
        try Array("hello".utf8).withUnsafeBytes { buffer in try file.writeAll(from: buffer) }
        try file.sync()
        var bytes = [UInt8](repeating: 0, count: 16)
        let count = try bytes.withUnsafeMutableBytes { buffer in try file.read(into: buffer, atOffset: 1) }
        #expect(Array(bytes[0..<count]) == Array("ello".utf8))
        let status = try file.status()
        #expect(status.isRegularFile && status.size == 5 && status.mode & 0o777 == 0o600)
        file.closeIgnoringErrors()

        try scratch.write("two", "other")
        // No replacing: false, and both files keep their bytes.
        #expect(try folder.renameNoReplace(one, to: two, in: folder) == false)
        #expect(scratch.read("one") == Array("hello".utf8))
        try folder.rename(one, to: two, in: folder)
        #expect(scratch.read("two") == Array("hello".utf8))
        #expect(scratch.read("one") == nil)

        #expect(throws: Errno.directoryNotEmpty) {
            try folder.makeDirectory(FilePath.Component("box"), permissions: 0o700)
            try scratch.write("box/inside", "x")
            try folder.removeDirectory(box)
        }
        #expect(try folder.unlink(two) == true)
        #expect(scratch.list("").sorted() == ["box"])
    }

    /// A large copy is hashed through read-only mappings of the page cache: any offset gives the
    /// file's bytes from there (the start is rounded down to a page inside), and a range past the
    /// end of the file is an error thrown, not a SIGBUS when the bytes are touched.
    @Test func aPopulatedMappingGivesTheFilesBytesAndRefusesPastItsEnd() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let content = (0..<(3 * FileDescriptor.pageSize + 123)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) }
        try scratch.write("copy.bin", content)
        let folder = try FileDescriptor.openDirectory(atPath: scratch.root)
        defer { folder.closeIgnoringErrors() }
        let file = try folder.open(FilePath.Component("copy.bin"), flags: O_RDONLY)
        defer { file.closeIgnoringErrors() }

        for (offset, count) in [(0, content.count), (1, 10), (FileDescriptor.pageSize - 1, 2), (FileDescriptor.pageSize + 5, 2 * FileDescriptor.pageSize + 118)] {
            let bytes = try file.withPopulatedMapping(offset: Int64(offset), count: count) { Array($0) }
            #expect(bytes == Array(content[offset..<(offset + count)]), "\(count) bytes from \(offset)")
        }
        // A page wholly past the end: Linux refuses to read it in (EFAULT).
        #expect(throws: Errno.badAddress) {
            try file.withPopulatedMapping(offset: Int64(4 * FileDescriptor.pageSize), count: 16) { Array($0) }
        }
    }
}
