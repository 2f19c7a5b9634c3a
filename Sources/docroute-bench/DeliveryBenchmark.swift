import ArgumentParser
import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension DocRouteBench {
    struct Delivery: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A burst of small files into one inbox, against a plain durable copy loop; one large file against cp.")
        @Option var files = 10_000
        @Flag var quick = false
        @Option(help: "Size of the large file in MiB (0 skips it).") var largeMiB = 1024
        @Flag(help: "Leave out the 30 s idle measurement.") var skipIdle = false

        func run() throws {
            var docroute: [Double] = []
            var baseline: [Double] = []
            var peak = 0.0
            for _ in 0..<(quick ? 1 : 3) {
                let daemon = try BenchDaemon(name: "burst")
                defer { daemon.stop() }
                try daemon.start()
                let names = try daemon.stageFiles(files, size: 4096)
                let watch = daemon.watchInbox()
                let elapsed = seconds {
                    for name in names { daemon.dropStaged(name) }
                    daemon.waitUntilInboxEmpty(watch)
                }
                let delivered = (try? FileManager.default.contentsOfDirectory(atPath: daemon.sandbox).count) ?? 0
                guard delivered == files else { throw BenchError("only \(delivered) of \(files) files arrived") }
                docroute.append(Double(files) / elapsed)
                peak = max(peak, daemon.peakResidentMiB)
                baseline.append(try Self.durableCopyLoop(files: files, root: daemon.root))
            }
            docroute.sort()
            baseline.sort()
            let rate = docroute[docroute.count / 2]
            let base = baseline[baseline.count / 2]
            report("burst of \(files) × 4 KiB, until all committed", rate, unit: "files/s", target: ">= 5,000")
            report("  baseline: durable copy loop (tmp, fsync, rename, fsync dir)", base, unit: "files/s")
            report("  ratio docroute / baseline", rate / base, unit: "×")
            report("  daemon peak resident memory", peak, unit: "MiB")

            if !quick && largeMiB > 0 { try large() }
            if !quick && !skipIdle { try idle() }
        }

        /// What an administrator's careful script does for each file, as fast as Swift can do it.
        static func durableCopyLoop(files: Int, root: String) throws -> Double {
            let source = root + "/baseline-src"
            let target = root + "/baseline-dst"
            try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
            var bytes = [UInt8](repeating: 7, count: 4096)
            for index in 0..<files {
                let fd = open("\(source)/f\(index)", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
                _ = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress, $0.count) }
                close(fd)
            }
            let folder = open(target, O_RDONLY | O_DIRECTORY)
            defer { close(folder) }
            let elapsed = seconds {
                for index in 0..<files {
                    let input = open("\(source)/f\(index)", O_RDONLY)
                    let count = bytes.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
                    close(input)
                    let output = open("\(target)/.f\(index).tmp", O_WRONLY | O_CREAT | O_EXCL, 0o644)
                    _ = bytes.withUnsafeBytes { write(output, $0.baseAddress, count) }
                    fsync(output)
                    close(output)
                    rename("\(target)/.f\(index).tmp", "\(target)/f\(index)")
                    fsync(folder)
                    unlink("\(source)/f\(index)")
                }
            }
            return Double(files) / elapsed
        }

        /// One large file, three times each way, alternating: `cp` then `fsync` of the copy, and
        /// docroute from the rename into the inbox to the `openURL` that says the copy is committed
        /// (the source's removal afterwards is not part of the copy, as it is not part of `cp`'s).
        func large() throws {
            let daemon = try BenchDaemon(name: "large")
            defer { daemon.stop() }
            try daemon.start()
            let client = try BenchClient(path: daemon.socket)
            defer { client.close() }
            client.send(#"{"type":"subscribe","id":"1","bundleIdentifier":"com.sunsetlakesoftware.molecules"}"#)
            _ = client.readLine()  // subscribed
            _ = client.readLine()  // the plain launch
            var cpTimes: [Double] = []
            var docrouteTimes: [Double] = []
            // The virtual disk is slow for a while after a large write or removal (its writeback,
            // online discard): each measurement starts after a flush and a pause, and the order
            // alternates so that neither side always comes second.
            func settle() {
                flushDirtyPages()
                sleep(8)
            }
            for round in 0..<3 {
                // Two sources alike, one for each side (a hard link would be quarantined).
                let name = "big\(round).pdb"
                let path = daemon.stage + "/" + name + ".cp"
                for file in [path, daemon.stage + "/" + name] {
                    let fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
                    var chunk = [UInt8](repeating: 0x41, count: 1 << 20)
                    for index in 0..<largeMiB {
                        chunk[0] = UInt8(truncatingIfNeeded: index)
                        chunk[1] = UInt8(truncatingIfNeeded: round)
                        _ = chunk.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                    }
                    fsync(fd)
                    close(fd)
                }
                settle()
                // cp, then fsync of the copy: the same durability docroute gives.
                func measureCp() {
                    cpTimes.append(seconds {
                        let cp = Process()
                        cp.executableURL = URL(fileURLWithPath: "/bin/cp")
                        cp.arguments = [path, daemon.root + "/cp-copy"]
                        try? cp.run()
                        cp.waitUntilExit()
                        let copy = open(daemon.root + "/cp-copy", O_RDONLY)
                        fsync(copy)
                        close(copy)
                    })
                    unlink(daemon.root + "/cp-copy")
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
                    guard delivered else { throw BenchError("the large file was not delivered") }
                    daemon.waitUntilInboxEmpty(watch)
                    for entry in (try? FileManager.default.contentsOfDirectory(atPath: daemon.sandbox)) ?? [] {
                        unlink(daemon.sandbox + "/" + entry)
                    }
                    settle()
                }
                if round % 2 == 0 {
                    measureCp()
                    try measureDocroute()
                } else {
                    try measureDocroute()
                    measureCp()
                }
                unlink(path)
            }
            progress("large file seconds, cp: \(cpTimes.map { String(format: "%.2f", $0) }), docroute: \(docrouteTimes.map { String(format: "%.2f", $0) })")
            cpTimes.sort()
            docrouteTimes.sort()
            let mib = Double(largeMiB)
            report("one \(largeMiB) MiB file, docroute (median of 3)", mib / docrouteTimes[1], unit: "MiB/s")
            report("  cp + fsync on the same disk (median of 3)", mib / cpTimes[1], unit: "MiB/s")
            report("  ratio docroute / cp", cpTimes[1] / docrouteTimes[1], unit: "×", target: ">= 0.9")
        }

        func idle() throws {
            let daemon = try BenchDaemon(name: "idle")
            defer { daemon.stop() }
            try daemon.start()
            sleep(2)
            let before = daemon.cpuSeconds
            sleep(30)
            report("idle daemon CPU over 30 s", (daemon.cpuSeconds - before) * 1000, unit: "ms", target: "0 (no polling)")
        }
    }
}
