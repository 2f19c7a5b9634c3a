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
        root = (FileManager.default.currentDirectoryPath as NSString).appendingPathComponent(".build-bench/\(name)-\(getpid())")
        try? FileManager.default.removeItem(atPath: root)
        inbox = root + "/drop"
        stage = root + "/stage"
        socket = root + "/s.sock"
        for folder in [inbox, stage, root + "/handlers.d"] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
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

    func start() throws {
        process.executableURL = URL(fileURLWithPath: binDirectory + "/docrouted")
        process.arguments = ["--config", root + "/docroute.toml", "--log-level", "warning"]
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        for _ in 0..<3000 {
            if let client = try? BenchClient(path: socket) { client.close(); return }
            usleep(10_000)
        }
        throw BenchError("docrouted did not start")
    }

    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: root)
    }

    /// Writes `count` files of `size` bytes into the staging folder (same file system as the inbox).
    func stageFiles(_ count: Int, size: Int, prefix: String = "f") throws -> [String] {
        var names: [String] = []
        var bytes = [UInt8](repeating: 0, count: size)
        for index in 0..<count {
            let name = "\(prefix)\(index).pdb"
            let header = Array("HEADER \(index)\n".utf8)
            bytes.replaceSubrange(0..<header.count, with: header)
            let fd = open(stage + "/" + name, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
            names.append(name)
        }
        return names
    }

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

    /// CPU time used by the daemon so far, in seconds (utime + stime from /proc).
    var cpuSeconds: Double {
        guard let text = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return 0 }
        let fields = text[text.index(after: close)...].split(separator: " ")
        let ticks = (Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Peak resident memory of the daemon (VmHWM), in MiB.
    var peakResidentMiB: Double {
        guard let text = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return 0 }
        return (Double(line.split(separator: " ")[1]) ?? 0) / 1024
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The smallest protocol client: one JSON object per line over a Unix socket.
final class BenchClient: @unchecked Sendable {
    let fd: Int32
    var buffer: [UInt8] = []

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() where index < raw.count - 1 { raw[index] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else {
            Glibc.close(fd)
            throw BenchError("connect failed")
        }
    }

    func send(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    func readLine() -> [UInt8]? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return nil }
            buffer.append(contentsOf: chunk[..<count])
        }
    }

    func close() { Glibc.close(fd) }

    /// The value of a string field in a protocol line, without a full JSON parse (fast enough for 100k lines).
    static func field(_ name: String, in line: [UInt8]) -> String? {
        let key = Array("\"\(name)\":\"".utf8)
        guard let start = line.firstRange(of: key)?.upperBound, let end = line[start...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
        return String(decoding: line[start..<end], as: UTF8.self)
    }
}
