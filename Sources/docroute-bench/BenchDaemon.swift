import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A docrouted release binary on a temporary tree, with the sample handlers.
final class BenchDaemon: @unchecked Sendable {
    let root: String
    let inbox: String
    let stage: String
    let socket: String
    let process = Process()

    init(name: String) throws {
        root = try freshScratchFolder(name, holding: ["drop", "stage", "handlers.d"])
        inbox = root + "/drop"
        stage = root + "/stage"
        socket = root + "/s.sock"
        for file in ["molecules.plist", "textviewer.plist"] {
            try FileManager.default.copyItem(atPath: repositoryRoot + "/config/handlers/" + file, toPath: root + "/handlers.d/" + file)
        }
        // No launch command: the benchmark subscribes itself.
        let manifest = root + "/handlers.d/molecules.plist"
        var text = try String(contentsOfFile: manifest, encoding: .utf8)
        if let start = text.range(of: "<key>DocRouteLaunchCommand</key>"), let end = text.range(of: "</array>", range: start.upperBound..<text.endIndex) {
            text.removeSubrange(start.lowerBound..<end.upperBound)
        }
        try text.write(toFile: manifest, atomically: true, encoding: .utf8)
        try """
            socket = "\(socket)"
            state_directory = "\(root)/state"
            containers_directory = "\(root)/containers"
            handlers_directory = "\(root)/handlers.d"
            quarantine_directory = "\(root)/quarantine"
            max_unacknowledged = 256

            [[inbox]]
            path = "\(inbox)"
            default_mailbox = "Inbox"
            """.write(toFile: root + "/docroute.toml", atomically: true, encoding: .utf8)
    }

    var sandbox: String { root + "/containers/com.sunsetlakesoftware.molecules/Documents/Inbox/Inbox" }

    var meter: ProcessMeter { ProcessMeter(pid: process.processIdentifier) }

    /// Starts the daemon; with `waitForSocket`, returns once its socket answers.
    func start(environment: [String: String] = [:], waitForSocket: Bool = true) throws {
        process.executableURL = URL(fileURLWithPath: daemonExecutable)
        process.arguments = ["--config", root + "/docroute.toml", "--log-level", "warning"]
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        var merged = ProcessInfo.processInfo.environment
        // A benchmark run from a service must not speak for it to systemd.
        merged["NOTIFY_SOCKET"] = nil
        for (key, value) in environment { merged[key] = value }
        process.environment = merged
        try process.run()
        Self.running.insert(process.processIdentifier)
        guard waitForSocket else { return }
        for _ in 0..<3000 {
            if let client = try? BenchClient(path: socket) { client.close(); return }
            guard process.isRunning else { throw BenchError("docrouted exited with status \(process.terminationStatus)") }
            usleep(10_000)
        }
        throw BenchError("docrouted did not start")
    }

    /// Daemons started and not yet stopped, for an interrupted run to stop.
    static let running = LockedSet()

    func stop() {
        Self.running.remove(process.processIdentifier)
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: root)
    }

    /// Writes `count` files of `size` bytes into the staging folder (same file system as the inbox).
    func stageFiles(_ count: Int, size: Int, prefix: String = "f") throws -> [String] {
        try writeFiles(count, size: size, prefix: prefix, in: stage)
    }

    /// Flushes what staging wrote, so neither side of a comparison pays for the other's writeback.
    func syncStaged() { flushDirtyPages() }

    func dropStaged(_ name: String) {
        rename(stage + "/" + name, inbox + "/" + name)
    }

    /// Entries left in the inbox (sources are removed only after their copies are committed).
    var inboxCount: Int {
        guard let directory = opendir(inbox) else { return -1 }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            if entry.pointee.d_name.0 != UInt8(ascii: ".") { count += 1 }
        }
        return count
    }

    /// Watches the inbox for removals, so that ``waitUntilInboxEmpty(_:)`` need not list a folder
    /// of thousands of entries every few milliseconds (which took a core from the daemon).
    func watchInbox() -> Int32 {
        let fd = inotify_init1(Int32(IN_CLOEXEC))
        guard fd >= 0 else { return -1 }
        guard inotify_add_watch(fd, inbox, UInt32(IN_DELETE | IN_MOVED_FROM)) >= 0 else { close(fd); return -1 }
        return fd
    }

    /// Returns once the inbox is empty: checks the listing only when removals were reported (or
    /// the watch overflowed) and, as a safety net, every 500 ms; `watch` comes from ``watchInbox()``
    /// (made before the drop, so no removal is missed) and is closed here.
    func waitUntilInboxEmpty(_ watch: Int32) {
        defer { if watch >= 0 { close(watch) } }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var pending = inboxCount
        while pending > 0 {
            guard watch >= 0 else { usleep(50_000); pending = inboxCount; continue }
            var poller = pollfd(fd: watch, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 500) > 0 else { pending = inboxCount; continue }
            let count = buffer.withUnsafeMutableBytes { read(watch, $0.baseAddress, $0.count) }
            guard count > 0 else { pending = inboxCount; continue }
            var removals = 0
            var offset = 0
            var overflowed = false
            while offset < count {
                let event = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: inotify_event.self) }
                if event.mask & UInt32(IN_Q_OVERFLOW) != 0 { overflowed = true } else { removals += 1 }
                offset += MemoryLayout<inotify_event>.size + Int(event.len)
            }
            pending -= removals
            // Only when the count says done (or events were lost) is the listing read to be sure.
            if pending <= 0 || overflowed { pending = inboxCount }
        }
    }

    /// CPU time used by the daemon so far, in seconds (utime + stime from /proc).
    var cpuSeconds: Double { meter.cpuSeconds }

    /// ``cpuSeconds`` once the daemon has gone quiet (two readings 200 ms apart differ by less
    /// than 2 ms, at most 10 s): what it does after the last acknowledgement, freeing the
    /// delivered sources, is part of the work per file.
    func cpuSecondsOnceQuiet() -> Double {
        var last = cpuSeconds
        for _ in 0..<50 {
            usleep(200_000)
            let now = cpuSeconds
            if now - last < 0.002 { return now }
            last = now
        }
        return last
    }

    /// Peak resident memory of the daemon (VmHWM), in MiB.
    var peakResidentMiB: Double { meter.peakResidentMiB }
}

/// Writes `count` files of `size` bytes named `<prefix><index>.pdb` into `folder`, each with its
/// index in its first line so no two are alike.
func writeFiles(_ count: Int, size: Int, prefix: String, in folder: String) throws -> [String] {
    var names: [String] = []
    names.reserveCapacity(count)
    var bytes = [UInt8](repeating: 0x20, count: size)
    for index in 0..<count {
        let name = "\(prefix)\(index).pdb"
        let header = Array("HEADER \(index)\n".utf8)
        bytes.replaceSubrange(0..<min(header.count, size), with: header.prefix(size))
        let fd = open(folder + "/" + name, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw BenchError("cannot create \(folder)/\(name): \(String(cString: strerror(errno)))") }
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == size else { throw BenchError("short write to \(folder)/\(name)") }
        names.append(name)
    }
    return names
}

/// Regular files of exactly `size` bytes directly in `folder`.
func countFiles(in folder: String, size: Int) -> Int {
    guard let directory = opendir(folder) else { return 0 }
    defer { closedir(directory) }
    let fd = dirfd(directory)
    var count = 0
    while let entry = readdir(directory) {
        var info = stat()
        let ok = withUnsafePointer(to: entry.pointee.d_name) {
            $0.withMemoryRebound(to: CChar.self, capacity: 256) { fstatat(fd, $0, &info, AT_SYMLINK_NOFOLLOW) == 0 }
        }
        if ok && (info.st_mode & S_IFMT) == S_IFREG && info.st_size == size { count += 1 }
    }
    return count
}

/// Flushes the dirty pages staging left (sync(2): Glibc does not export syncfs without _GNU_SOURCE).
func flushDirtyPages() {
    sync()
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The smallest protocol client: one JSON object per line over a Unix socket.
final class BenchClient: @unchecked Sendable {
    let fd: Int32
    var buffer: [UInt8] = []
    var consumed = 0

    init(path: String) throws {
        fd = try BenchUnixSocket.open(SOCK_STREAM, .connect, path: path)
    }

    func send(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    func readLine() -> [UInt8]? {
        while true {
            if let newline = buffer[consumed...].firstIndex(of: 0x0A) {
                let line = Array(buffer[consumed..<newline])
                consumed = newline + 1
                return line
            }
            // Drop what was read only now and then: removing each line from the front is quadratic.
            buffer.removeSubrange(..<consumed)
            consumed = 0
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else {
                if count == 0 || (errno != EAGAIN && errno != EINTR) { isClosed = true }
                return nil
            }
            buffer.append(contentsOf: chunk[..<count])
        }
    }

    func close() { Glibc.close(fd) }

    /// After this, ``readLine()`` returns nil when nothing arrived for `seconds` (and ``isClosed`` stays false).
    func setReadTimeout(_ seconds: Double) {
        var interval = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Whether the daemon closed the connection (as opposed to a read that timed out).
    private(set) var isClosed = false

    /// The value of a string field in a protocol line, without a full JSON parse (fast enough for 100k lines).
    static func field(_ name: String, in line: [UInt8]) -> String? {
        // On the raw bytes: the generic `firstRange(of:)` was four fifths of the subscriber's reading
        // in a burst, taken from the two cores the daemon is measured on.
        let key = Array("\"\(name)\":\"".utf8)
        return line.withUnsafeBufferPointer { text -> String? in
            guard let base = text.baseAddress, text.count >= key.count else { return nil }
            for index in 0...(text.count - key.count) where text[index] == key[0] && memcmp(base + index, key, key.count) == 0 {
                let start = index + key.count
                guard let end = text[start...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
                return String(decoding: text[start..<end], as: UTF8.self)
            }
            return nil
        }
    }
}
