import DocRouteTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The real `docrouted` started the way systemd starts `docroute.service` from `docroute.socket`:
/// the listening socket on descriptor 3 with `LISTEN_FDS`/`LISTEN_PID`/`LISTEN_FDNAMES`, a
/// `NOTIFY_SOCKET` the test reads, and `WATCHDOG_USEC`. No root and no systemd needed.
@Suite(.serialized) struct SystemdProtocolTests {
    static let watchdogMicroseconds = 400_000

    @Test func readyComesOnlyOnceThePassedSocketAnswersAndStatusFollows() throws {
        let run = try ActivatedDaemonRun()
        defer { run.finish() }
        // The daemon is frozen the moment READY=1 arrives and its event loop inspected: the passed
        // socket must already be polled there, or READY=1 went out before the daemon could serve.
        // (A daemon that sends READY=1 a few hundred microseconds early can slip through now and
        // then; one that sends it before it is able to serve at all cannot.)
        run.inspectAtFirstReady()
        try run.spawn()

        let ready = try #require(run.notifications.waitFor(timeout: 30) { $0.fields["READY"] == "1" }, "no READY=1:\n\(run.log)")
        #expect(run.pollingAtReady == true, "READY=1 came before the daemon polled the passed socket (fd 3):\n\(run.log)")
        let client = try LineClient(path: run.activatedSocketPath, timeout: 5)
        defer { client.close() }
        try client.send(["type": "hello", "protocol": 1])
        let welcome = try #require(client.readMessage(), "no welcome on the passed socket after READY=1:\n\(run.log)")
        #expect(welcome["type"] as? String == "welcome")
        #expect((ContinuousClock.now - ready.arrival).seconds < 5)
        // It adopted fd 3 instead of binding the configured path.
        #expect(!FileManager.default.fileExists(atPath: run.harness.socket), "docrouted bound \(run.harness.socket) although a socket was passed")

        // `systemctl status` shows the line sent after READY=1.
        let readyIndex = try #require(run.notifications.all.firstIndex { $0.fields["READY"] == "1" })
        let status = try #require(
            run.notifications.waitFor(after: readyIndex, timeout: 10) { $0.fields["STATUS"] != nil }, "no STATUS= after READY=1")
        #expect(status.fields["STATUS"]?.contains("handlers") == true, "STATUS=\(status.fields["STATUS"] ?? "")")
    }

    @Test func watchdogPingsKeepHalfTheWatchdogPeriod() throws {
        let run = try ActivatedDaemonRun()
        defer { run.finish() }
        try run.spawn()
        _ = try #require(run.notifications.waitFor(timeout: 30) { $0.fields["READY"] == "1" }, "no READY=1:\n\(run.log)")
        let start = ContinuousClock.now
        usleep(2_000_000)
        let end = ContinuousClock.now
        let pings = run.notifications.all.filter { $0.fields["WATCHDOG"] == "1" && $0.arrival >= start && $0.arrival <= end }
        // 400 ms → a ping every 200 ms, 10 in 2 s; the slack covers a loaded CI machine.
        #expect((6...14).contains(pings.count), "\(pings.count) WATCHDOG=1 in 2 s, expected about 10")
        let gaps = zip(pings.dropFirst(), pings).map { ($0.arrival - $1.arrival).seconds }.sorted()
        try #require(gaps.count >= 2, "too few pings to measure their period")
        // systemd kills the service after 400 ms without a ping; allow scheduling noise, not a stall.
        #expect(gaps[gaps.count - 1] < 0.9, "a gap of \(gaps[gaps.count - 1]) s between pings")
        #expect((0.15...0.35).contains(gaps[gaps.count / 2]), "median ping interval \(gaps[gaps.count / 2]) s, expected about 0.2 s")
        #expect(!run.notifications.all.contains { $0.fields["WATCHDOG"] == "trigger" })
    }

    @Test func reloadIsAnnouncedAndStopExitsZero() throws {
        let run = try ActivatedDaemonRun()
        defer { run.finish() }
        try run.spawn()
        _ = try #require(run.notifications.waitFor(timeout: 30) { $0.fields["READY"] == "1" }, "no READY=1:\n\(run.log)")

        // systemd accepts `systemctl reload` as soon as READY=1 has come, so SIGHUP goes at once.
        let beforeReload = run.notifications.all.count
        kill(run.pid, SIGHUP)
        var announced: NotifyListener.Notification?
        for _ in 0..<100 where announced == nil {
            announced = run.notifications.waitFor(after: beforeReload, timeout: 0.1) { $0.fields["RELOADING"] == "1" }
            if announced == nil, let exit = run.waitForExit(seconds: 0) {
                Issue.record("docrouted ended with \(exit) on a SIGHUP sent right after READY=1 (its SIGHUP handler must be in place before READY=1):\n\(run.log)")
                return
            }
        }
        let reloading = try #require(announced, "no RELOADING=1 after SIGHUP:\n\(run.log)")
        // systemd ignores RELOADING=1 without a current MONOTONIC_USEC= in newer versions.
        #expect(reloading.fields["MONOTONIC_USEC"].flatMap(UInt64.init) != nil, "RELOADING=1 without MONOTONIC_USEC: \(reloading.text)")
        let reloadingIndex = try #require(run.notifications.all.lastIndex { $0.fields["RELOADING"] == "1" })
        _ = try #require(
            run.notifications.waitFor(after: reloadingIndex + 1, timeout: 10) { $0.fields["READY"] == "1" },
            "no READY=1 after RELOADING=1:\n\(run.log)")
        // Still serving after the reload.
        let client = try LineClient(path: run.activatedSocketPath, timeout: 5)
        try client.send(["type": "hello", "protocol": 1])
        #expect(client.readMessage()?["type"] as? String == "welcome")
        client.close()

        let beforeStop = run.notifications.all.count
        kill(run.pid, SIGTERM)
        _ = try #require(
            run.notifications.waitFor(after: beforeStop, timeout: 10) { $0.fields["STOPPING"] == "1" },
            "no STOPPING=1 after SIGTERM:\n\(run.log)")
        let exit = try #require(run.waitForExit(seconds: 20), "docrouted did not exit within 20 s of SIGTERM:\n\(run.log)")
        #expect(exit == .exited(0), "docrouted ended with \(exit):\n\(run.log)")
        // The sockets are systemd's: after the daemon stops they must still listen, so the next
        // connection starts it again (a shutdown(2) on either would fail docroute.socket).
        for path in [run.activatedSocketPath, run.descriptorSocketPath] {
            let client = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            defer { close(client) }
            let connected = withUnsafePointer(to: Self.address(path)) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            #expect(connected == 0, "\(path) no longer listens after docrouted stopped: \(String(cString: strerror(errno)))")
        }
    }

    static func address(_ path: String) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() where index < raw.count - 1 { raw[index] = byte }
        }
        return address
    }

    /// A handler the daemon starts must not believe the activated socket, the notify socket or the
    /// watchdog are its own: neither the variables nor the descriptor may reach it.
    @Test func launchedHandlersInheritNeitherActivationVariablesNorTheSocket() throws {
        let run = try ActivatedDaemonRun(sampleHandlers: false)
        defer { run.finish() }
        let reportPath = run.harness.root + "/handler.report"
        try run.installProbeHandler(reportingTo: reportPath)
        try run.spawn()
        _ = try #require(run.notifications.waitFor(timeout: 30) { $0.fields["READY"] == "1" }, "no READY=1:\n\(run.log)")
        try run.harness.drop("sample.envprobe", Array("probe\n".utf8))
        #expect(run.harness.waitFor(reportPath, timeout: 20), "the probe handler was not launched:\n\(run.log)")
        let report = try String(contentsOfFile: reportPath, encoding: .utf8)
        let lines = report.split(separator: "\n").map(String.init)
        // Proof that the report comes from the handler docrouted launched.
        #expect(lines.contains("DOCROUTE_BUNDLE_IDENTIFIER=\(ActivatedDaemonRun.probeBundle)"), "\(report)")
        // It is told to connect where the passed socket listens, not where the configuration says.
        #expect(lines.contains("DOCROUTE_SOCKET=\(run.activatedSocketPath)"), "\(report)")
        for variable in ["LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"] {
            #expect(!lines.contains { $0.hasPrefix(variable + "=") }, "the handler inherited \(variable):\n\(report)")
        }
        let descriptors = lines.filter { $0.hasPrefix("fd ") }
        #expect(!descriptors.isEmpty, "the report lists no descriptors:\n\(report)")
        let socketLink = "socket:[\(run.listeningSocketInode)]"
        #expect(!descriptors.contains { $0.hasSuffix(" " + socketLink) }, "the handler holds the listening socket:\n\(report)")
    }
}

/// One socket-activated `docrouted` on a `DaemonHarness` tree, with its notify socket.
final class ActivatedDaemonRun: @unchecked Sendable {
    static let probeBundle = "org.docroute.test.envprobe"

    enum Exit: Equatable, CustomStringConvertible {
        case exited(Int32)
        case signalled(Int32)
        var description: String {
            switch self {
            case .exited(let code): "exit status \(code)"
            case .signalled(let signal): "signal \(signal)"
            }
        }
    }

    let harness: DaemonHarness
    let activatedSocketPath: String
    let notifySocketPath: String
    let logPath: String
    let listener: Int32
    /// The descriptor socket, passed as fd 4 as docroute.socket's second ListenStream= passes it.
    let descriptorSocketPath: String
    let descriptorListener: Int32
    let listeningSocketInode: UInt64
    let notifications: NotifyListener
    private let lock = NSLock()
    private var childPID: pid_t = 0
    private var polledAtReady: Bool?
    private var reaped = false

    var pid: pid_t { lock.withLock { childPID } }
    /// Whether fd 3 was in the daemon's event loop when READY=1 arrived (see ``inspectAtFirstReady()``).
    var pollingAtReady: Bool? { lock.withLock { polledAtReady } }

    init(sampleHandlers: Bool = true) throws {
        harness = try DaemonHarness(sampleHandlers: sampleHandlers)
        // A different path from the configured one, so the test sees which the daemon serves.
        activatedSocketPath = harness.root + "/activated.sock"
        notifySocketPath = harness.root + "/notify.sock"
        logPath = harness.root + "/activated.log"
        listener = try Self.listeningSocket(at: activatedSocketPath)
        descriptorSocketPath = harness.root + "/activated.fd.sock"
        descriptorListener = try Self.listeningSocket(at: descriptorSocketPath)
        var info = stat()
        fstat(listener, &info)
        listeningSocketInode = UInt64(info.st_ino)
        notifications = try NotifyListener(path: notifySocketPath)
    }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// On the first READY=1, still on the receiving thread: SIGSTOP the daemon, record whether it
    /// polls fd 3, SIGCONT. Stopping it first leaves it no time to catch up on what READY promised.
    func inspectAtFirstReady() {
        notifications.observe { [self] notification in
            guard notification.fields["READY"] == "1", pollingAtReady == nil, pid > 0 else { return }
            kill(pid, SIGSTOP)
            let polling = pollsDescriptor(3)
            kill(pid, SIGCONT)
            lock.withLock { polledAtReady = polling }
        }
    }

    /// A handler that claims `.envprobe` files and, when launched, writes its environment and the
    /// targets of its open descriptors to `reportPath`.
    func installProbeHandler(reportingTo reportPath: String) throws {
        let script = #"""
            { env; for fd in /proc/$$/fd/*; do printf 'fd %s %s\n' "${fd##*/}" "$(readlink "$fd")"; done; } > "$0.tmp" && mv "$0.tmp" "$0"
            """#
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
            <key>CFBundleIdentifier</key><string>\(Self.probeBundle)</string>
            <key>CFBundleName</key><string>Environment probe</string>
            <key>CFBundleDocumentTypes</key>
            <array><dict>
            <key>CFBundleTypeName</key><string>Probe</string>
            <key>LSHandlerRank</key><string>Owner</string>
            <key>LSItemContentTypes</key><array><string>org.docroute.test.envprobe-file</string></array>
            </dict></array>
            <key>UTExportedTypeDeclarations</key>
            <array><dict>
            <key>UTTypeIdentifier</key><string>org.docroute.test.envprobe-file</string>
            <key>UTTypeConformsTo</key><array><string>public.data</string></array>
            <key>UTTypeTagSpecification</key><dict>
            <key>public.filename-extension</key><string>envprobe</string>
            </dict>
            </dict></array>
            <key>DocRouteUser</key><string>\(getuid())</string>
            <key>DocRouteLaunchCommand</key>
            <array><string>/bin/sh</string><string>-c</string><string>\(script.xmlEscaped)</string><string>\(reportPath.xmlEscaped)</string></array>
            </dict>
            </plist>
            """
        try plist.write(toFile: harness.handlers + "/envprobe.plist", atomically: true, encoding: .utf8)
    }

    /// Starts docrouted with the listening socket on fd 3 and systemd's variables, through
    /// `/bin/sh -c 'LISTEN_PID=$$ … exec docrouted'` so LISTEN_PID is the daemon's own pid.
    func spawn() throws {
        let daemon = DaemonHarness.binDirectory + "/docrouted"
        let arguments = [
            "/bin/sh", "-c", #"LISTEN_PID=$$; WATCHDOG_PID=$$; export LISTEN_PID WATCHDOG_PID; exec "$0" "$@""#,
            daemon, "--config", harness.configPath, "--log-level", "debug",
        ]
        var environment = ProcessInfo.processInfo.environment
        for key in environment.keys where key.hasPrefix("LISTEN_") || key.hasPrefix("WATCHDOG_") || key == "JOURNAL_STREAM" || key == "NOTIFY_SOCKET" {
            environment[key] = nil
        }
        environment["PATH"] = DaemonHarness.binDirectory + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment["LISTEN_FDS"] = "2"
        environment["LISTEN_FDNAMES"] = "docroute:docroute"
        environment["NOTIFY_SOCKET"] = notifySocketPath
        environment["WATCHDOG_USEC"] = String(SystemdProtocolTests.watchdogMicroseconds)

        let logFile = open(logPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard logFile >= 0 else { throw HarnessError("cannot create \(logPath)") }
        defer { close(logFile) }
        // Copies from 10 up: a source that is itself 3 (or 1, 2) would make the dup2 actions below
        // keep close-on-exec or overwrite one another.
        let socketCopy = fcntl(listener, F_DUPFD_CLOEXEC, 10)
        let descriptorSocketCopy = fcntl(descriptorListener, F_DUPFD_CLOEXEC, 10)
        let logCopy = fcntl(logFile, F_DUPFD_CLOEXEC, 10)
        defer {
            if socketCopy >= 0 { close(socketCopy) }
            if descriptorSocketCopy >= 0 { close(descriptorSocketCopy) }
            if logCopy >= 0 { close(logCopy) }
        }
        guard socketCopy >= 0, descriptorSocketCopy >= 0, logCopy >= 0 else { throw HarnessError("fcntl(F_DUPFD_CLOEXEC): \(errno)") }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, logCopy, 1)
        posix_spawn_file_actions_adddup2(&actions, logCopy, 2)
        // dup2 clears close-on-exec on the copy: fd 3 is the only socket the daemon inherits.
        posix_spawn_file_actions_adddup2(&actions, socketCopy, 3)
        posix_spawn_file_actions_adddup2(&actions, descriptorSocketCopy, 4)

        // systemd starts services with no blocked signals and default dispositions.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGHUP, SIGTERM, SIGINT, SIGPIPE, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let entries = environment.map { "\($0.key)=\($0.value)" }
        var child: pid_t = 0
        let result = Self.withCStrings(arguments) { argv in
            Self.withCStrings(entries) { envp in posix_spawn(&child, "/bin/sh", &actions, &attributes, argv, envp) }
        }
        guard result == 0 else { throw HarnessError("posix_spawn /bin/sh: \(String(cString: strerror(result)))") }
        lock.withLock { childPID = child }
    }

    /// Whether an epoll instance of the daemon watches its descriptor `fd` (`tfd:` in fdinfo).
    func pollsDescriptor(_ fd: Int32) -> Bool {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fdinfo") else { return false }
        let pattern = try? NSRegularExpression(pattern: "^tfd:\\s+\(fd)\\s", options: [.anchorsMatchLines])
        for entry in entries {
            guard let text = try? String(contentsOfFile: "/proc/\(pid)/fdinfo/\(entry)", encoding: .utf8), text.contains("tfd:") else { continue }
            if pattern?.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil { return true }
        }
        return false
    }

    /// Reaps the daemon; nil when it is still running after `seconds`.
    func waitForExit(seconds: Double) -> Exit? {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        var status: Int32 = 0
        repeat {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid {
                reaped = true
                // WIFEXITED/WEXITSTATUS are macros Swift does not import.
                let signal = status & 0x7f
                return signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
            }
            if result < 0, errno != EINTR { return nil }
            usleep(20_000)
        } while ContinuousClock.now < deadline
        return nil
    }

    /// Kills the daemon if it still runs (and any handler it left behind exits on its own), then
    /// removes the tree.
    func finish() {
        if pid > 0, !reaped {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
            reaped = true
        }
        notifications.stop()
        close(listener)
        close(descriptorListener)
        harness.remove()
    }

    static func listeningSocket(at path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket: \(errno)") }
        guard bindUnix(fd, path) == 0, listen(fd, 64) == 0 else {
            let code = errno
            close(fd)
            throw HarnessError("bind/listen \(path): \(String(cString: strerror(code)))")
        }
        return fd
    }

    static func bindUnix(_ fd: Int32, _ path: String) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { errno = ENAMETOOLONG; return -1 }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
        let pointers = strings.map { strdup($0) } + [nil]
        defer { pointers.forEach { free($0) } }
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}

/// The service manager's end of `NOTIFY_SOCKET`: a datagram socket whose messages a thread
/// collects with their arrival times.
final class NotifyListener: @unchecked Sendable {
    struct Notification: Sendable {
        let text: String
        let fields: [String: String]
        let arrival: ContinuousClock.Instant
    }

    private let fd: Int32
    private let lock = NSLock()
    private var received: [Notification] = []
    private var observer: (@Sendable (Notification) -> Void)?
    private var stopped = false
    private let done = DispatchSemaphore(value: 0)

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket: \(errno)") }
        guard ActivatedDaemonRun.bindUnix(fd, path) == 0 else {
            let code = errno
            close(fd)
            throw HarnessError("bind \(path): \(String(cString: strerror(code)))")
        }
        // Wakes the thread now and then to notice stop().
        var interval = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        let thread = Thread { [self] in receiveUntilStopped() }
        thread.start()
    }

    private func receiveUntilStopped() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !lock.withLock({ stopped }) {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { continue }
            let arrival = ContinuousClock.now
            let text = String(decoding: buffer[..<count], as: UTF8.self)
            var fields: [String: String] = [:]
            for line in text.split(separator: "\n") {
                let parts = line.split(separator: "=", maxSplits: 1)
                fields[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
            }
            let notification = Notification(text: text, fields: fields, arrival: arrival)
            lock.withLock { observer }?(notification)
            lock.withLock { received.append(notification) }
        }
        done.signal()
    }

    var all: [Notification] { lock.withLock { received } }

    /// Calls `body` on the receiving thread for each message, before waiters see it.
    func observe(_ body: @escaping @Sendable (Notification) -> Void) {
        lock.withLock { observer = body }
    }

    /// The first message from index `after` on that matches, waiting up to `timeout` seconds.
    func waitFor(after: Int = 0, timeout: Double, _ matches: (Notification) -> Bool) -> Notification? {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        repeat {
            let messages = all
            if after < messages.count, let found = messages[after...].first(where: matches) { return found }
            usleep(5_000)
        } while ContinuousClock.now < deadline
        return nil
    }

    func stop() {
        let wasRunning = lock.withLock { () -> Bool in
            defer {
                stopped = true
                observer = nil
            }
            return !stopped
        }
        if wasRunning { done.wait() }
        close(fd)
    }
}

extension Duration {
    fileprivate var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}

extension String {
    fileprivate var xmlEscaped: String {
        replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}
