import CDocRouteShim
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The disk's line: the least any durable delivery of these files must cost on this file system.
/// Each file is copied (`copy_file_range`) to a new temporary file, one `syncfs` per 256, then each
/// is renamed to its final name. No source is removed, nothing is typed, logged or recorded.
enum DiskLineBaseline {
    static let batch = 256

    /// Copies every file of `source` into `destination`; returns the seconds it took.
    static func run(source: String, destination: String) throws -> Double {
        let names = try FileManager.default.contentsOfDirectory(atPath: source).sorted()
        let from = open(source, O_RDONLY | O_DIRECTORY)
        let to = open(destination, O_RDONLY | O_DIRECTORY)
        guard from >= 0, to >= 0 else { throw BenchError("cannot open \(source) or \(destination)") }
        defer { close(from); close(to) }
        let start = DispatchTime.now().uptimeNanoseconds
        var first = 0
        while first < names.count {
            let batch = names[first..<min(first + Self.batch, names.count)]
            for name in batch {
                let input = openat(from, name, O_RDONLY)
                let output = openat(to, "." + name + ".tmp", O_WRONLY | O_CREAT | O_EXCL, 0o600)
                guard input >= 0, output >= 0 else { throw BenchError("cannot copy \(name): \(String(cString: strerror(errno)))") }
                while docroute_copy_file_range(input, output, 1 << 20) > 0 {}
                close(input)
                close(output)
            }
            guard docroute_syncfs(to) == 0 else { throw BenchError("syncfs: \(String(cString: strerror(errno)))") }
            for name in batch where renameat(to, "." + name + ".tmp", to, name) != 0 {
                throw BenchError("rename \(name): \(String(cString: strerror(errno)))")
            }
            first += Self.batch
        }
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
}
