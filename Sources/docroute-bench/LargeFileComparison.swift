import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One large file, docroute against `cp` and `fsync(2)` of the copy (the same durability: the
/// bytes on disk under their final name), in alternating pairs on the same disk.
///
/// docroute's side runs from the rename into the inbox to the subscriber's `ack` of the `openURL`
/// that says the copy is committed (copied, synced, renamed into the sandbox, recorded). The
/// source's removal afterwards is not part of it, as it is not part of `cp`'s. `cp` is coreutils'
/// (which copies with `copy_file_range` itself), then one `fsync` of the copy.
///
/// The virtual disk is slow for a while after a large write or removal (writeback, online
/// discard): every measurement starts after `sync` and a pause, and the order alternates within
/// each pair so that neither side always comes second. The page cache is not dropped: that would
/// slow every other process on a shared machine, and both sides read a source that was just
/// written (and is cached) alike.
struct LargeFileComparison {
    var mebibytes: Int
    var pairs: Int
    var settleSeconds: UInt32

    func measure() throws -> Comparison.LargeFile {
        let daemon = try BenchDaemon(name: "large")
        defer { daemon.stop() }
        try daemon.start()
        let client = try BenchClient(path: daemon.socket)
        defer { client.close() }
        client.send(#"{"type":"subscribe","id":"1","bundleIdentifier":"com.sunsetlakesoftware.molecules"}"#)
        _ = client.readLine()  // subscribed
        _ = client.readLine()  // the plain launch
        client.setReadTimeout(600)
        var cpTimes: [Double] = []
        var docrouteTimes: [Double] = []
        func settle() {
            flushDirtyPages()
            sleep(settleSeconds)
        }
        for pair in 0..<max(1, pairs) {
            progress("large file: pair \(pair + 1) of \(pairs), writing two sources of \(mebibytes) MiB")
            // Two sources alike, one for each side (a hard link would be quarantined).
            let name = "big\(pair).pdb"
            let cpSource = daemon.stage + "/" + name + ".cp"
            for file in [cpSource, daemon.stage + "/" + name] {
                try Self.write(file, mebibytes: mebibytes, mark: pair)
            }
            settle()
            func measureCp() throws {
                let copy = daemon.root + "/cp-copy"
                var status: Int32 = 0
                cpTimes.append(seconds {
                    let cp = Process()
                    cp.executableURL = URL(fileURLWithPath: "/bin/cp")
                    cp.arguments = [cpSource, copy]
                    try? cp.run()
                    cp.waitUntilExit()
                    status = cp.terminationStatus
                    let fd = open(copy, O_RDONLY)
                    fsync(fd)
                    close(fd)
                })
                unlink(copy)
                guard status == 0 else { throw BenchError("cp exited with status \(status)") }
                settle()
            }
            func measureDocroute() throws {
                let watch = daemon.watchInbox()
                var delivered = false
                docrouteTimes.append(seconds {
                    daemon.dropStaged(name)
                    while let line = client.readLine() {
                        guard let id = BenchClient.field("deliveryID", in: line) else { continue }
                        client.send(#"{"type":"ack","deliveryID":"\#(id)","handled":true}"#)
                        delivered = true
                        break
                    }
                })
                guard delivered else { throw BenchError("the large file was not delivered within 600 s") }
                daemon.waitUntilInboxEmpty(watch)
                let copies = (try? FileManager.default.contentsOfDirectory(atPath: daemon.sandbox)) ?? []
                guard countFiles(in: daemon.sandbox, size: mebibytes << 20) == 1 else {
                    throw BenchError("the sandbox holds \(copies) after the large file, not one copy of \(mebibytes) MiB")
                }
                for entry in copies { unlink(daemon.sandbox + "/" + entry) }
                settle()
            }
            if pair % 2 == 0 {
                try measureCp()
                try measureDocroute()
            } else {
                try measureDocroute()
                try measureCp()
            }
            unlink(cpSource)
            progress(String(format: "large file: pair %d: cp + fsync %.2f s, docroute %.2f s", pair + 1, cpTimes[pair], docrouteTimes[pair]))
        }
        return Comparison.LargeFile(mebibytes: mebibytes, settleSeconds: Int(settleSeconds),
                                    cpSeconds: cpTimes, docrouteSeconds: docrouteTimes)
    }

    /// `mebibytes` MiB, each MiB marked with its index and `mark` so no two files or blocks are alike.
    static func write(_ path: String, mebibytes: Int, mark: Int) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw BenchError("cannot create \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var chunk = [UInt8](repeating: 0x41, count: 1 << 20)
        for index in 0..<mebibytes {
            chunk[0] = UInt8(truncatingIfNeeded: index)
            chunk[1] = UInt8(truncatingIfNeeded: index >> 8)
            chunk[2] = UInt8(truncatingIfNeeded: mark)
            let written = chunk.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            guard written == chunk.count else { throw BenchError("short write to \(path)") }
        }
        fsync(fd)
    }
}
