import Foundation
import SystemPackage
import Testing
import DocRouteTestSupport
import DocRoutePlatform

#if canImport(Glibc)
import Glibc
#endif

/// The platform layer's calls on whole paths (the administrator's folders) and its small
/// process-wide calls: each throws the `Errno` it failed with, or answers where absence is an answer.
@Suite struct FilePathSyscallsTests {
    @Test func makingAFolderSaysWhetherItWasMadeAndTheModeIsExact() throws {
        try TemporaryFolder.with { scratch in
            let path = scratch.path("new")
            let previous = umask(0o077)
            defer { umask(previous) }
            #expect(try path.makeDirectory(permissions: 0o770) == true)
            #expect(try path.makeDirectory(permissions: 0o770) == false)
            // The umask took the group's bits; chmod gives them back.
            #expect(try path.status(followingSymbolicLinks: true)?.mode == UInt32(S_IFDIR) | 0o700)
            try path.changeMode(0o770)
            #expect(try path.status(followingSymbolicLinks: true)?.mode == UInt32(S_IFDIR) | 0o770)
            #expect(throws: Errno.noSuchFileOrDirectory) { try scratch.path("missing/new").makeDirectory(permissions: 0o700) }
        }
    }

    @Test func statusTellsTypesAndAbsence() throws {
        try TemporaryFolder.with { scratch in
            try scratch.write("file.pdf", "%PDF-1.7")
            try scratch.folder("folder")
            try FileManager.default.createSymbolicLink(atPath: scratch.path("link").string, withDestinationPath: "folder")
            #expect(try scratch.path("link").status(followingSymbolicLinks: false)?.fileType == .symbolicLink)
            #expect(try scratch.path("link").status(followingSymbolicLinks: true)?.fileType == .directory)
            #expect(try scratch.path("file.pdf").status(followingSymbolicLinks: false)?.fileType == .regular)
            #expect(try scratch.path("missing").status(followingSymbolicLinks: false) == nil)
            // A path through a file names nothing either.
            #expect(try scratch.path("file.pdf/inner").status(followingSymbolicLinks: true) == nil)
        }
    }

    @Test func accessIsCheckedWithItsErrno() throws {
        try TemporaryFolder.with { scratch in
            try scratch.write("script.sh", "#!/bin/sh\n")
            #expect(scratch.path("script.sh").isAccessible(.exists))
            #expect(scratch.path("script.sh").isAccessible([.read, .write]))
            #expect(throws: Errno.noSuchFileOrDirectory) { try scratch.path("missing").checkAccess(.exists) }
            // Not executable: even root is refused X_OK for a file nobody may run.
            #expect(throws: Errno.permissionDenied) { try scratch.path("script.sh").checkAccess(.execute) }
        }
    }

    /// The descriptor a client passes must be open for reading: not write-only, not O_PATH.
    @Test func aDescriptorIsOpenForReadingOnlyWhenItCanBeRead() throws {
        try TemporaryFolder.with { scratch in
            try scratch.write("file.pdf", "%PDF-1.7")
            let folder = try FileDescriptor.openDirectory(atPath: scratch.root)
            defer { folder.closeIgnoringErrors() }
            let name: FilePath.Component = "file.pdf"
            for (mode, options, readable) in [
                (FileDescriptor.AccessMode.readOnly, FileDescriptor.OpenOptions(), true),
                (.readWrite, [], true),
                (.writeOnly, [], false),
                (.readOnly, .pathOnly, false),
            ] {
                let file = try folder.open(name, mode, options: options)
                defer { file.closeIgnoringErrors() }
                #expect(try file.isOpenForReading() == readable, "\(mode) \(options)")
            }
        }
    }

    /// A socket file is live while something accepts on it, stale (and removed) once nothing does.
    @Test func aStaleSocketIsToldFromALiveOne() throws {
        try TemporaryFolder.with("sock") { scratch in
            let path = scratch.path("s.sock").string
            #expect(UnixSocketFile.removeStale(at: path) == .absent)
            let listener = try FileDescriptor.unixStreamSocket(nonBlocking: false)
            try listener.bind(unixPath: path)
            try listener.listen(backlog: 1)
            #expect(UnixSocketFile.acceptsConnections(at: path))
            #expect(UnixSocketFile.removeStale(at: path) == .live)
            listener.closeIgnoringErrors()
            #expect(!UnixSocketFile.acceptsConnections(at: path))
            #expect(UnixSocketFile.removeStale(at: path) == .removedStale)
            #expect(!FileManager.default.fileExists(atPath: path))
            try scratch.write("s.sock", "not a socket")
            #expect(UnixSocketFile.removeStale(at: path) == .notASocket)
        }
    }

    /// The inotify mask bits are the kernel's (inotify(7)), and a watch reports a file closed after
    /// writing with its watch descriptor and name.
    @Test func inotifyReportsAClosedFileWithTheKernelsBits() throws {
        #expect(InotifyMask.closeWrite.rawValue == 0x8)
        #expect(InotifyMask.movedTo.rawValue == 0x80)
        #expect(InotifyMask.create.rawValue == 0x100)
        #expect(InotifyMask.queueOverflow.rawValue == 0x4000)
        #expect(InotifyMask.isDirectory.rawValue == 0x4000_0000)
        #expect(InotifyMask.onlyDirectory.rawValue == 0x0100_0000)
        try TemporaryFolder.with { scratch in
            let inotify = try FileDescriptor.inotify(nonBlocking: true)
            defer { inotify.closeIgnoringErrors() }
            var buffer = [UInt8](repeating: 0, count: 4096)
            // Non-blocking: nothing happened yet, so a read says so rather than waiting.
            #expect(throws: Errno.wouldBlock) { _ = try buffer.withUnsafeMutableBytes { try inotify.read(into: $0) } }
            let watch = try inotify.addInotifyWatch(path: scratch.string, mask: [.closeWrite, .onlyDirectory])
            #expect(try inotify.addInotifyWatch(path: scratch.string, mask: [.closeWrite, .onlyDirectory]) == watch)
            try scratch.write("arrived.pdf", "%PDF-1.7")
            let count = try buffer.withUnsafeMutableBytes { try inotify.read(into: $0) }
            #expect(count >= 16)
            let header = buffer.withUnsafeBytes { raw in
                (raw.loadUnaligned(fromByteOffset: 0, as: Int32.self), raw.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
            }
            #expect(header.0 == watch)
            #expect(InotifyMask(rawValue: header.1).contains(.closeWrite))
            #expect(String(decoding: buffer[16..<count].prefix { $0 != 0 }, as: UTF8.self) == "arrived.pdf")
            #expect(throws: Errno.notDirectory) {
                try inotify.addInotifyWatch(path: scratch.path("arrived.pdf").string, mask: [.closeWrite, .onlyDirectory])
            }
        }
    }

    /// A thread takes another user's file-system identity and gives it back, without changing the
    /// process's own.
    @Test(.enabled(if: geteuid() == 0, "only root may take another file-system identity"))
    func aThreadReadsAsAnotherUserAndComesBack() async throws {
        try await TemporaryFolder.with { scratch in
            try scratch.write("private.pdf", "%PDF-1.7")
            let path = scratch.path("private.pdf")
            try path.changeMode(0o600)
            let (asNobody, afterwards) = try await runBlocking { () -> (Errno?, Errno?) in
                func openError() -> Errno? {
                    do {
                        let file = try FileDescriptor.open(atPath: path, .readOnly)
                        file.closeIgnoringErrors()
                        return nil
                    } catch {
                        return error
                    }
                }
                let own = try ProcessIdentity.supplementaryGroups()
                try ThreadFileSystemIdentity.setGroups([65534])
                try ThreadFileSystemIdentity.setIDs(uid: 65534, gid: 65534)
                let asNobody = openError()
                try ThreadFileSystemIdentity.setIDs(uid: 0, gid: 0)
                try ThreadFileSystemIdentity.setGroups(own)
                return (asNobody, openError())
            }
            #expect(asNobody == .permissionDenied)
            #expect(afterwards == nil)
        }
    }
}
