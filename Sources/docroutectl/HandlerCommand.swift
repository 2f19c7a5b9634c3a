import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The program `subscribe --exec` runs for each document, with the document as its last argument.
///
/// Arguments are bytes: a file name in a handler's sandbox need not be UTF-8, and the child
/// must get exactly the bytes of the path. The child's standard output goes to standard error,
/// so `subscribe`'s standard output stays one JSON line per event; its standard input is
/// /dev/null.
struct HandlerCommand: Sendable {
    /// A command that could not be started.
    struct LaunchFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// How the child ended.
    enum Outcome: Sendable, Equatable {
        case exited(Int32)
        case killed(signal: Int32)

        /// Exit status 0: the handler took the document.
        var handled: Bool { self == .exited(0) }

        var summary: String {
            switch self {
            case .exited(let status): "exited with status \(status)"
            case .killed(let signal): "was killed by signal \(signal)"
            }
        }
    }

    /// The program and its first arguments.
    let words: [String]

    /// `--exec cmd arg…` gives the words as they are; `--exec "cmd arg…"` (one argument, as a
    /// systemd unit's `${HANDLER_COMMAND}` passes it) is split like a shell would.
    init(arguments: [String]) throws(LaunchFailure) {
        var words = arguments
        if arguments.count == 1 {
            do {
                words = try ShellWords.split(arguments[0])
            } catch {
                throw LaunchFailure(description: "--exec: \(error)")
            }
        }
        guard let program = words.first, !program.isEmpty else {
            throw LaunchFailure(description: "--exec needs a command, e.g. --exec /usr/local/bin/open-molecule --verbose")
        }
        self.words = words
        guard Self.resolve(program) != nil else {
            throw LaunchFailure(description: "--exec: '\(program)' is not an executable file\(program.contains("/") ? "" : " in PATH")")
        }
    }

    /// Where exec would find the program: itself when it names a path, else the first match in PATH.
    static func resolve(_ program: String) -> String? {
        if program.contains("/") { return access(program, X_OK) == 0 ? program : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for folder in path.split(separator: ":", omittingEmptySubsequences: false) {
            let candidate = (folder.isEmpty ? "." : String(folder)) + "/" + program
            var info = stat()
            if stat(candidate, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, access(candidate, X_OK) == 0 {
                return candidate
            }
        }
        return nil
    }

    /// Runs the command with `target` appended and waits for it.
    ///
    /// - Parameters:
    ///   - target: The last argument, as bytes (a path or a URL).
    ///   - environment: Added to (and overriding) this process's environment.
    func run(target: [UInt8], environment: [String: String]) async throws(LaunchFailure) -> Outcome {
        let pid = try spawn(arguments: words.map { Array($0.utf8) } + [target], environment: environment)
        let status = await Self.waitForExit(pid)
        // The wait status layout of Linux: low 7 bits the signal, else the exit status in bits 8-15.
        let signal = status & 0x7F
        return signal == 0 ? .exited((status >> 8) & 0xFF) : .killed(signal: signal)
    }

    private func spawn(arguments: [[UInt8]], environment: [String: String]) throws(LaunchFailure) -> pid_t {
        var merged = ProcessInfo.processInfo.environment
        for (key, value) in environment { merged[key] = value }
        let argv = arguments.map { Self.cString($0) }
        let envp = merged.map { Self.cString(Array("\($0.key)=\($0.value)".utf8)) }
        defer {
            for pointer in argv { pointer.deallocate() }
            for pointer in envp { pointer.deallocate() }
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO)

        // A child must not inherit the ignored SIGPIPE or blocked signals of this runtime.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD] { sigaddset(&defaults, signal) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        var pid: pid_t = 0
        let result = (argv.map(Optional.some) + [nil]).withUnsafeBufferPointer { argvBuffer in
            (envp.map(Optional.some) + [nil]).withUnsafeBufferPointer { envpBuffer in
                posix_spawnp(
                    &pid, argv[0], &actions, &attributes,
                    UnsafeMutablePointer(mutating: argvBuffer.baseAddress!),
                    UnsafeMutablePointer(mutating: envpBuffer.baseAddress!))
            }
        }
        guard result == 0 else {
            throw LaunchFailure(description: "cannot run \(words[0]): \(String(cString: strerror(result)))")
        }
        return pid
    }

    /// waitpid blocks, so it runs on a thread of its own rather than in the cooperative pool.
    private static func waitForExit(_ pid: pid_t) async -> Int32 {
        await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
            Thread {
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0 {
                    guard errno == EINTR else {
                        // ECHILD: someone else reaped it; nothing says it succeeded.
                        status = 0x7F00
                        break
                    }
                }
                continuation.resume(returning: status)
            }.start()
        }
    }

    private static func cString(_ bytes: [UInt8]) -> UnsafeMutablePointer<CChar> {
        let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
        for (index, byte) in bytes.enumerated() { pointer[index] = CChar(bitPattern: byte) }
        pointer[bytes.count] = 0
        return pointer
    }
}
