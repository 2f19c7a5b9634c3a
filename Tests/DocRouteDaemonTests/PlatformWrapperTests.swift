import DocRoutePlatform
import DocRouteTestSupport
import Foundation
import SystemPackage
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The platform layer's wrappers the ledger, the delivery, the systemd binding and docroutectl
/// call instead of the C library: each does what its call does and throws the `Errno` it failed with.
@Suite struct PlatformWrapperTests {
    @Test func renameUnlinkAndTheResolvedPathOfALink() throws {
        try TemporaryFolder.with { scratch in
            try scratch.write("ledger.sqlite", "rows")
            try scratch.path("ledger.sqlite").rename(to: scratch.path("ledger.sqlite.damaged"))
            #expect(try scratch.path("ledger.sqlite").status(followingSymbolicLinks: false) == nil)
            #expect(FileManager.default.contents(atPath: scratch.path("ledger.sqlite.damaged").string) == Data("rows".utf8))
            #expect(throws: Errno.noSuchFileOrDirectory) { try scratch.path("missing").rename(to: scratch.path("other")) }

            #expect(try scratch.path("ledger.sqlite.damaged").unlink() == true)
            #expect(try scratch.path("ledger.sqlite.damaged").unlink() == false)

            try scratch.folder("real")
            try FileManager.default.createSymbolicLink(atPath: scratch.path("link").string, withDestinationPath: "real")
            let resolved = try scratch.path("link").resolvingSymbolicLinks()
            #expect(resolved == (try FilePath(realpathOf: scratch.path("real"))))
            #expect(throws: Errno.noSuchFileOrDirectory) { try scratch.path("missing").resolvingSymbolicLinks() }
        }
    }

    @Test func theCurrentFolderAndRawBytesOfAPath() throws {
        let current = try FilePath.currentDirectory()
        #expect(current.string == FileManager.default.currentDirectoryPath)
        let bytes: [UInt8] = Array("/tmp/caf".utf8) + [0xE9]  // not UTF-8
        #expect(FilePath(platformBytes: bytes)?.platformBytes == bytes)
        #expect(FilePath(platformBytes: [0x61, 0x00, 0x62]) == nil)
    }

    @Test func inotifyEventsAreReadWithTheirNames() throws {
        try TemporaryFolder.with { scratch in
            let watcher = try FileDescriptor.inotify(nonBlocking: true)
            defer { watcher.closeIgnoringErrors() }
            _ = try watcher.addInotifyWatch(path: scratch.string, mask: [.delete, .movedTo, .onlyDirectory, .dontFollow])
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 8)
            defer { buffer.deallocate() }
            // Nothing queued yet: a non-blocking read finds no event rather than failing.
            #expect(try watcher.readInotifyRecords(into: buffer).isEmpty)

            try scratch.write("ledger.sqlite-wal", "log")
            try scratch.write("incoming", "new")
            try scratch.path("incoming").rename(to: scratch.path("ledger.sqlite"))
            _ = try scratch.path("ledger.sqlite-wal").unlink()
            #expect(try watcher.waitUntilReadable(timeoutMilliseconds: 5_000))
            let events = try watcher.readInotifyRecords(into: buffer)
            let names = { (mask: InotifyMask) in events.filter { $0.mask.contains(mask) }.map { String(decoding: $0.name, as: UTF8.self) } }
            // The scratch folder writes by renaming a temporary into place: those are moves too.
            #expect(names(.movedTo).last == "ledger.sqlite")
            #expect(names(.delete) == ["ledger.sqlite-wal"])
        }
    }

    @Test func aRecordCutShortIsDropped() {
        // wd 1, IN_DELETE, cookie 0, a name of 16 bytes of which only 4 arrived.
        var bytes: [UInt8] = []
        for field in [UInt32(1), UInt32(0x200), 0, 16] { withUnsafeBytes(of: field) { bytes += $0 } }
        bytes += Array("name".utf8)
        #expect(bytes.withUnsafeBytes { InotifyRecord.decode($0) }.isEmpty)
        bytes += [UInt8](repeating: 0, count: 12)
        let records = bytes.withUnsafeBytes { InotifyRecord.decode($0) }
        #expect(records == [InotifyRecord(watchDescriptor: 1, mask: .delete, name: Array("name".utf8))])
    }

    @Test func aStreamWriteGoesWholeAndAFullPipeSaysSo() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let reader = FileDescriptor(rawValue: ends[0]), writer = FileDescriptor(rawValue: ends[1])
        defer { reader.closeIgnoringErrors(); writer.closeIgnoringErrors() }
        try writer.setNonBlocking()
        let line = Array("docrouted: cannot start\n".utf8)
        #expect(try line.withUnsafeBytes { try writer.writeOnce(from: $0) } == line.count)
        #expect(try writer.waitUntilWritable(timeoutMilliseconds: 0))
        var received = [UInt8](repeating: 0, count: 64)
        let count = try received.withUnsafeMutableBytes { try reader.read(into: $0) }
        #expect(Array(received[..<count]) == line)
        // Filled up, the non-blocking pipe refuses more rather than blocking.
        let chunk = [UInt8](repeating: 0x41, count: 1 << 16)
        var refused: Errno?
        while refused == nil {
            do {
                _ = try chunk.withUnsafeBytes { try writer.writeOnce(from: $0) }
            } catch {
                refused = error as? Errno ?? .ioError
            }
        }
        #expect(refused == .resourceTemporarilyUnavailable)
        #expect(try writer.waitUntilWritable(timeoutMilliseconds: 10) == false)
    }

    @Test func anErrnoReadsAsTheCLibrarySaysIt() {
        #expect(Errno.noSuchFileOrDirectory.systemMessage == "No such file or directory")
        #expect(Errno.permissionDenied.systemMessage == "Permission denied")
    }

    @Test func aChildRunsWithTheGivenEnvironmentAndItsExitStatusIsKept() throws {
        let child = try ChildProcess.spawn(arguments: [Array("sh".utf8), Array("-c".utf8), Array("exit $CODE".utf8)],
                                           environment: ["CODE": "7", "PATH": "/usr/bin:/bin"])
        let status = try child.waitForExit()
        #expect(status & 0x7F == 0 && (status >> 8) & 0xFF == 7)
        #expect(throws: Errno.noSuchFileOrDirectory) {
            try ChildProcess.spawn(arguments: [Array("docroute-no-such-program".utf8)], environment: ["PATH": "/usr/bin:/bin"])
        }
    }

    @Test func theMonotonicClockMovesOnAndTheTimestampHasItsOffset() throws {
        let first = SystemClock.monotonic.now()
        let second = SystemClock.monotonic.now()
        #expect(second >= first && first > .zero)
        let wall = SystemClock.realTime.now()
        #expect(abs(Double(wall.components.seconds) - Date().timeIntervalSince1970) < 5, "the wall clock reads the time since 1970")
        let stamp = LocalTime.timestamp(Date(timeIntervalSince1970: 0))
        #expect(stamp.wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{4}/) != nil, "\(stamp)")
        #expect(ProcessEnvironment.value("DOCROUTE_SURELY_UNSET_VARIABLE") == nil)
        #expect(ProcessEnvironment.value("PATH") == ProcessInfo.processInfo.environment["PATH"])
    }
}

extension FilePath {
    /// The path as realpath(3) gives it, straight from the C library, to compare with.
    fileprivate init(realpathOf path: FilePath) throws {
        guard let resolved = realpath(path.string, nil) else { throw Errno(rawValue: errno) }
        defer { free(resolved) }
        self.init(String(cString: resolved))
    }
}
