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
        @Option(name: .customLong("large-mib"), help: "Size of the large file in MiB (0 skips it).") var largeMiB = 1024
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

        /// One large file against `cp` and `fsync`, three alternating pairs (``LargeFileComparison``).
        func large() throws {
            let figure = try LargeFileComparison(mebibytes: largeMiB, pairs: 3, settleSeconds: 8).measure()
            let mib = Double(largeMiB)
            report("one \(largeMiB) MiB file, docroute until acknowledged (median of 3)", mib / figure.docrouteMedian, unit: "MiB/s")
            report("  cp + fsync on the same disk (median of 3)", mib / figure.cpMedian, unit: "MiB/s")
            report("  ratio docroute / cp (median of the pairs')", figure.ratio, unit: "×", target: ">= 0.95")
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
