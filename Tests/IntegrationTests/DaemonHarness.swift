import DocRouteTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs the real `docrouted` binary on a temporary tree and talks to it over its real socket.
final class DaemonHarness: @unchecked Sendable {
    let folder: TemporaryFolder
    let root: String
    let inbox: String
    let containers: String
    let quarantine: String
    let handlers: String
    let socket: String
    let configPath: String
    private(set) var process: Process?
    let logPath: String

    static var binDirectory: String {
        // The test bundle sits in the build's bin folder, beside docrouted and docroutectl.
        let argument = ProcessInfo.processInfo.arguments.first { $0.contains(".xctest") } ?? ProcessInfo.processInfo.arguments[0]
        var directory = URL(fileURLWithPath: argument).deletingLastPathComponent()
        if !FileManager.default.fileExists(atPath: directory.appendingPathComponent("docrouted").path) {
            directory = URL(fileURLWithPath: Fixtures.repositoryRoot).appendingPathComponent(".build/debug")
        }
        return directory.path
    }

    static var repositoryRoot: String { Fixtures.repositoryRoot }

    /// `launchCommands: false` (the default) strips `DocRouteLaunchCommand` from the sample
    /// manifests, so no launched handler races a test for the documents it is checking.
    /// `extraInbox` is appended to the configuration with `{ROOT}` replaced by the temporary root.
    init(extraConfig: String = "", extraInbox: String = "", sampleHandlers: Bool = true, launchCommands: Bool = false) throws {
        folder = try TemporaryFolder("it")
        root = folder.string
        inbox = root + "/drop"
        containers = root + "/containers"
        quarantine = root + "/quarantine"
        handlers = root + "/handlers.d"
        // Unix socket paths are limited to 107 bytes; the temporary root is short.
        socket = root + "/s.sock"
        configPath = root + "/docroute.toml"
        logPath = root + "/daemon.log"
        try FileManager.default.createDirectory(atPath: handlers, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        if sampleHandlers {
            for name in try FileManager.default.contentsOfDirectory(atPath: Self.repositoryRoot + "/config/handlers") {
                let target = handlers + "/" + name
                try FileManager.default.copyItem(atPath: Self.repositoryRoot + "/config/handlers/" + name, toPath: target)
                if !launchCommands {
                    var text = try String(contentsOfFile: target, encoding: .utf8)
                    if let start = text.range(of: "<key>DocRouteLaunchCommand</key>"),
                       let end = text.range(of: "</array>", range: start.upperBound..<text.endIndex) {
                        text.removeSubrange(start.lowerBound..<end.upperBound)
                        try text.write(toFile: target, atomically: true, encoding: .utf8)
                    }
                }
            }
        }
        // The test process runs many tests at once on as many threads as there are cores, and
        // tests that wait on processes hold those threads: a client task may then wait more than
        // the default minute between connecting and sending its first line, and find itself
        // closed as idle. Tests of the idle timeout set their own.
        let idleTimeout = extraConfig.contains("idle_timeout") ? "" : "idle_timeout = 900"
        let config = """
            socket = "\(socket)"
            state_directory = "\(root)/state"
            containers_directory = "\(containers)"
            handlers_directory = "\(handlers)"
            quarantine_directory = "\(quarantine)"
            \(idleTimeout)
            \(extraConfig)

            [[inbox]]
            path = "\(inbox)"
            kind = "directory"
            default_mailbox = "Inbox"
            source_application = "com.apple.mobilemail"

            \(extraInbox.replacingOccurrences(of: "{ROOT}", with: root))
            """
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)
    }

    /// Starts the daemon and waits until its socket answers. `runAs` (root only) runs it under
    /// another uid and gid through setpriv, after giving that user the temporary tree. `shell`
    /// is a command line put before it (its last word a `sh -c` script ending in `exec "$0" "$@"`,
    /// or a wrapper that execs its arguments, as `fiu-run` does). `wrapper` is a command line put
    /// before it that runs the daemon as its child (`strace -f ...`): signals then go to that child,
    /// the daemon itself, not to the wrapper. `capabilities` or `ambientCapabilities` (with
    /// `runAs`, e.g. `["chown", "fowner"]`) are raised in the daemon's inheritable and ambient
    /// sets, as docroute.service's AmbientCapabilities= does.
    func start(environment: [String: String] = [:], runAs: (uid: UInt32, gid: UInt32)? = nil, capabilities: [String] = [], ambientCapabilities: [String] = [],
               shell: [String]? = nil, wrapper: [String]? = nil) throws {
        let process = Process()
        wrapped = wrapper != nil
        let arguments = ["--config", configPath, "--log-level", "debug"]
        if let runAs {
            try chownTree(root, uid: runAs.uid, gid: runAs.gid)
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            let raised = capabilities + ambientCapabilities
            let kept = raised.map { "+" + $0 }.joined(separator: ",")
            process.arguments = ["--reuid=\(runAs.uid)", "--regid=\(runAs.gid)", "--clear-groups"]
                + (raised.isEmpty ? [] : ["--inh-caps=\(kept)", "--ambient-caps=\(kept)"])
                + ["--", Self.binDirectory + "/docrouted"] + arguments
        } else if let shell = shell ?? wrapper {
            process.executableURL = URL(fileURLWithPath: shell[0])
            process.arguments = Array(shell.dropFirst()) + [Self.binDirectory + "/docrouted"] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: Self.binDirectory + "/docrouted")
            process.arguments = arguments
        }
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        log.seekToEndOfFile()
        process.standardError = log
        process.standardOutput = log
        try process.run()
        self.process = process
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            // Ready means the socket answers and the daemon said so (its signal handlers are set then).
            if daemonLog.contains("docrouted ready"), let client = try? LineClient(path: socket) {
                client.close()
                usleep(20_000)
                return
            }
            guard process.isRunning else { throw HarnessError("docrouted exited with \(process.terminationStatus):\n\(daemonLog)") }
            usleep(20_000)
        }
        throw HarnessError("docrouted did not open its socket within 30 s:\n\(daemonLog)")
    }

    private func chownTree(_ path: String, uid: UInt32, gid: UInt32) throws {
        guard lchown(path, uid, gid) == 0 else { throw HarnessError("chown \(path): \(String(cString: strerror(errno)))") }
        let walker = FileManager.default.enumerator(atPath: path)
        while let entry = walker?.nextObject() as? String {
            lchown(path + "/" + entry, uid, gid)
        }
    }

    var daemonLog: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Whether the daemon runs as the child of a `wrapper` given to ``start(environment:runAs:capabilities:ambientCapabilities:shell:wrapper:)``.
    private(set) var wrapped = false

    /// Whether the process started (the wrapper, if any) still runs. Foundation learns of its end
    /// only once every copy of a socket the child inherited is closed, and the Swift runtime's
    /// backtracer, started by a crashing daemon, holds one for as long as it runs: a process that
    /// is already a zombie counts as ended.
    var isRunning: Bool {
        guard let process, process.isRunning else { return false }
        let stat = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8)) ?? ""
        guard let close = stat.lastIndex(of: ")") else { return false }
        return stat[stat.index(after: close)...].split(separator: " ").first != "Z"
    }

    /// The daemon's process id: the process started, or under a `wrapper` its child named docrouted
    /// (`nil` while the wrapper has not started it yet, or once it ended).
    var daemonProcessID: pid_t? {
        guard let process, isRunning else { return nil }
        guard wrapped else { return process.processIdentifier }
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(entry),
                  let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")") else { continue }
            // `pid (comm) state ppid ...`; the name may itself hold spaces or parentheses.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if stat[stat.index(after: open)..<close] == "docrouted", fields.count > 1, pid_t(fields[1]) == process.processIdentifier {
                return pid
            }
        }
        return nil
    }

    func signal(_ signal: Int32) {
        if let pid = daemonProcessID { kill(pid, signal) }
    }

    /// SIGKILL, as a crash would.
    func crash() {
        signal(SIGKILL)
        if wrapped, let process, !waitForExit(timeout: 10) {
            // The wrapper never started the daemon, or outlived it: it goes too.
            kill(process.processIdentifier, SIGKILL)
        }
        _ = waitForExit(timeout: 60)
    }

    /// SIGTERM, then SIGKILL if the daemon has not exited within `timeout` seconds; `true` if it
    /// exited by itself.
    @discardableResult
    func stop(timeout: TimeInterval) -> Bool {
        signal(SIGTERM)
        if waitForExit(timeout: timeout) { return true }
        crash()
        return false
    }

    /// Waits until the process started (the wrapper, if any) has exited; `false` after `timeout` seconds.
    func waitForExit(timeout: TimeInterval) -> Bool {
        guard waitUntil(timeout: timeout, { !self.isRunning }) else { return false }
        // Foundation reaps it a moment later (its exit status is read after this), unless a
        // backtracer still holds the inherited socket.
        _ = waitUntil(timeout: 2) { self.process?.isRunning != true }
        return true
    }

    func stop() {
        signal(SIGTERM)
        while isRunning { usleep(10_000) }
        _ = waitForExit(timeout: 0)
    }

    func remove() {
        if isRunning { crash() }
        folder.remove()
    }

    /// Writes a file the way a careful sender does: a hidden temporary name, then a rename.
    @discardableResult
    func drop(_ name: String, _ bytes: [UInt8], mailbox: String? = nil) throws -> String {
        let folder = mailbox.map { inbox + "/" + $0 } ?? inbox
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let temporary = folder + "/.incoming-\(UUID().uuidString)"
        try Data(bytes).write(to: URL(fileURLWithPath: temporary))
        let final = folder + "/" + name
        guard rename(temporary, final) == 0 else { throw HarnessError("rename failed: \(errno)") }
        return final
    }

    func sandbox(_ bundle: String, mailbox: String = "Inbox") -> String {
        containers + "/" + bundle + "/Documents/Inbox/" + mailbox
    }

    /// Waits until `path` exists (the daemon renames complete files into place, so existing means complete).
    func waitFor(_ path: String, timeout: TimeInterval = 15) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if FileManager.default.fileExists(atPath: path) { return true }
            usleep(10_000)
        }
        return false
    }

    /// Waits until every file dropped so far is committed: sources leave the inbox only after
    /// their copies and ledger rows are durable (a copy can appear a moment before its commit).
    func waitForInboxDrained(timeout: TimeInterval = 15) -> Bool {
        waitUntil(timeout: timeout) {
            guard let walker = FileManager.default.enumerator(atPath: inbox) else { return false }
            while let entry = walker.nextObject() as? String {
                var info = stat()
                if lstat(inbox + "/" + entry, &info) == 0, (info.st_mode & S_IFMT) != S_IFDIR { return false }
            }
            return true
        }
    }

    func waitUntil(timeout: TimeInterval = 15, _ condition: () -> Bool) -> Bool {
        Self.waitUntil(timeout: timeout, condition)
    }

    /// Polls `condition` every 10 ms until it holds; false after `timeout` seconds.
    static func waitUntil(timeout: TimeInterval = 15, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }
}

struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

