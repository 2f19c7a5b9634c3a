import DocRouteSystemd
import DocRouteTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Runs this test binary again as a socket-activated child, the way systemd starts docrouted:
/// `socket` sits on descriptor 3 from the first instruction, `LISTEN_PID` is the child's own pid
/// and `LISTEN_FDS`/`LISTEN_FDNAMES` name it. The child runs only ``socketActivationProbe()`` and
/// writes what it saw, one `key=value` per line, to a report file that this returns.
///
/// Moving a socket onto descriptor 3 inside the test process itself is not safe: there 3 already
/// belongs to libdispatch's epoll instance, which other threads use at any moment.
enum ActivatedChild {
    static let reportVariable = "DOCROUTE_ACTIVATION_PROBE_REPORT"
    static let socketPathVariable = "DOCROUTE_ACTIVATION_PROBE_SOCKET"

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func run(passing socket: UnixSocket, names: String) throws -> [String: String] {
        let folder = try TemporaryFolder("activation-probe")
        defer { folder.remove() }
        let reportPath = folder.string("report")
        let logPath = folder.string("output")

        var executable = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &executable, executable.count - 1)
        guard length > 0 else { throw Failure(description: "cannot find the test binary: readlink /proc/self/exe") }
        let testBinary = String(decoding: executable[0..<length], as: UTF8.self)

        // The shell's pid is the child's pid after `exec`, which is what LISTEN_PID must name.
        let arguments = [
            "/bin/sh", "-c", "LISTEN_PID=$$; export LISTEN_PID; exec \"$0\" \"$@\"",
            testBinary, "--testing-library", "swift-testing", "--filter", "socketActivationProbe",
        ]
        var environment = currentEnvironment().filter { !$0.hasPrefix("LISTEN_") }
        environment += [
            "LISTEN_FDS=1", "LISTEN_FDNAMES=\(names)",
            "\(reportVariable)=\(reportPath)", "\(socketPathVariable)=\(socket.path)",
        ]

        let logFile = open(logPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard logFile >= 0 else { throw Failure(description: "cannot create \(logPath)") }
        defer { close(logFile) }
        // Either may itself be descriptor 3 (it is free until libdispatch takes it), where the
        // dup2 actions below would be a no-op that keeps close-on-exec or overwrite one with the
        // other; copies from 10 up avoid both.
        let listener = fcntl(socket.descriptor, F_DUPFD_CLOEXEC, 10)
        let log = fcntl(logFile, F_DUPFD_CLOEXEC, 10)
        defer {
            if listener >= 0 { close(listener) }
            if log >= 0 { close(log) }
        }
        guard listener >= 0, log >= 0 else { throw Failure(description: "fcntl(F_DUPFD_CLOEXEC) failed") }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 clears close-on-exec on the copy, so exactly these survive into the child.
        posix_spawn_file_actions_adddup2(&actions, listener, 3)
        posix_spawn_file_actions_adddup2(&actions, log, 1)
        posix_spawn_file_actions_adddup2(&actions, log, 2)

        var pid: pid_t = 0
        let spawned = withCStrings(arguments) { argv in
            withCStrings(environment) { envp in
                posix_spawn(&pid, "/bin/sh", &actions, nil, argv, envp)
            }
        }
        guard spawned == 0 else { throw Failure(description: "posix_spawn failed: \(spawned)") }

        let status = try waitForExit(pid, seconds: 60)
        let output = readText(logPath) ?? ""
        guard status == 0 else {
            throw Failure(description: "activated child exited with status \(status):\n\(output)")
        }
        guard let report = readText(reportPath) else {
            throw Failure(description: "activated child wrote no report (probe not run?):\n\(output)")
        }
        var values: [String: String] = [:]
        for line in report.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            values[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        return values
    }

    private static func waitForExit(_ pid: pid_t, seconds: Int) throws -> CInt {
        var status: CInt = 0
        for _ in 0..<(seconds * 20) {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid {
                // WIFEXITED/WEXITSTATUS are macros Swift does not import.
                let signal = status & 0x7f
                return signal == 0 ? (status >> 8) & 0xff : 128 + signal
            }
            if result < 0, errno != EINTR { throw Failure(description: "waitpid failed") }
            usleep(50_000)
        }
        kill(pid, SIGKILL)
        _ = waitpid(pid, &status, 0)
        throw Failure(description: "activated child did not finish within \(seconds) s")
    }

    private static func currentEnvironment() -> [String] {
        var result: [String] = []
        var cursor = environ
        while let entry = cursor.pointee {
            result.append(String(cString: entry))
            cursor += 1
        }
        return result
    }

    private static func withCStrings<R>(
        _ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R
    ) -> R {
        let pointers = strings.map { strdup($0) } + [nil]
        defer { pointers.forEach { free($0) } }
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }

    static func readText(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// The child's half: runs only inside a process started by ``ActivatedChild/run(passing:names:)``
/// (skipped in a normal test run) and reports what socket activation gave it; the parent test
/// makes the assertions.
@Test(.enabled(if: environmentValue(ActivatedChild.reportVariable) != nil))
func socketActivationProbe() throws {
    let reportPath = try #require(environmentValue(ActivatedChild.reportVariable))
    var lines: [String] = []
    do {
        let activation = try SocketActivation()
        lines.append("descriptors=" + activation.descriptors.map(\.description).joined(separator: ","))
        for variable in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] {
            lines.append("\(variable)=\(environmentValue(variable) ?? "unset")")
        }
        lines.append("cloexec=\(fcntl(3, F_GETFD) & FD_CLOEXEC != 0)")
        if let descriptor = try activation.descriptor(named: SocketActivation.docrouteSocketName) {
            lines.append("docroute=\(descriptor)")
            // Prove it is the parent's socket: connect to its path and accept on the descriptor.
            let path = try #require(environmentValue(ActivatedChild.socketPathVariable))
            let client = try UnixSocket.connectClient(to: path)
            defer { close(client) }
            let accepted = accept(descriptor, nil, nil)
            lines.append("accepted=\(accepted >= 0)")
            if accepted >= 0 { close(accepted) }
        } else {
            lines.append("docroute=none")
        }
    } catch let error as SystemdError {
        lines.append("error=\(error.code)")
        lines.append("message=\(error.message)")
    }
    let text = lines.joined(separator: "\n") + "\n"
    guard let file = fopen(reportPath, "w") else { throw ActivatedChild.Failure(description: "cannot write report") }
    fputs(text, file)
    fclose(file)
}
