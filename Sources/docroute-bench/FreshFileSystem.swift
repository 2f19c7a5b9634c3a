import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A new ext4 file system for one side of a burst comparison: an image file beside the working
/// folder, made without a journal like this machine's root file system, loop-mounted with online
/// discard, removed afterwards (`docroute-bench compare --fresh-file-system`; root only).
///
/// Why: ext4 without a journal will not hand a new file an inode freed in the last 60 s (360 s
/// while that inode's table block is dirty, which the next allocation beside it makes it) while it
/// finds another, and it finds one by scanning from the start of the block group past each such
/// inode (`recently_deleted()` in fs/ext4/ialloc.c). On one shared file system every side of a
/// comparison pays for the files the sides before it removed, by an amount that depends on which
/// block group its folders landed in: the disk's line measured 30,000 and 11,000 files/s a minute
/// apart. On its own new file system each side pays only for what it frees itself (the durable
/// loop's unlinks, docroute's reclaimer), which is part of what is measured. The loop device costs
/// every side alike; the figures are not the root file system's.
final class FreshFileSystem {
    /// Where ``scratchFolder(_:)`` puts trees while a fresh file system is mounted.
    nonisolated(unsafe) static var current: String?

    let image: String
    let mountPoint: String

    /// Makes and mounts a file system large enough for `files` files of 4 KiB copied once.
    init(name: String, files: Int) throws {
        guard getuid() == 0 else { throw BenchError("--fresh-file-system needs root (it makes and loop-mounts an ext4 image)") }
        let base = (FileManager.default.currentDirectoryPath as NSString).appendingPathComponent(".build-bench")
        image = base + "/\(name)-\(getpid()).ext4"
        mountPoint = base + "/\(name)-\(getpid()).mnt"
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        // Room for the staged files, their copies, the ledger and a large file; one inode per 4 KiB.
        let mebibytes = 1_536 + files * 3 * 4 / 1024
        try Self.run("/usr/bin/truncate", ["-s", "\(mebibytes)M", image])
        // Inode tables written now, not by ext4lazyinit in the background during the burst.
        try Self.run("/usr/sbin/mkfs.ext4", ["-q", "-F", "-O", "^has_journal", "-i", "4096",
                                            "-E", "lazy_itable_init=0,nodiscard", image])
        try Self.run("/bin/mount", ["-o", "loop,discard", image, mountPoint])
        Self.current = mountPoint
    }

    /// Unmounts and removes the image; one still mounted is left, and said so.
    func remove() {
        Self.current = nil
        do {
            try Self.run("/bin/umount", [mountPoint])
        } catch {
            progress("could not unmount \(mountPoint) (\(error)); its image \(image) is left for you to remove after `umount`")
            return
        }
        try? FileManager.default.removeItem(atPath: image)
        try? FileManager.default.removeItem(atPath: mountPoint)
    }

    /// Runs `body` with its trees on a new file system, removed afterwards.
    static func around<T>(_ enabled: Bool, name: String, files: Int, _ body: () throws -> T) throws -> T {
        guard enabled else { return try body() }
        let fileSystem = try FreshFileSystem(name: name, files: files)
        defer { fileSystem.remove() }
        return try body()
    }

    static func run(_ tool: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let text = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchError("\(tool) \(arguments.joined(separator: " ")) failed: \(String(decoding: text, as: UTF8.self))")
        }
    }
}
