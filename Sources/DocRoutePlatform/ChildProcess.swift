import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A program a command-line tool runs on a person's behalf (`docroutectl subscribe --exec`), as
/// that person, found in `PATH` as a shell would find it: its standard input is /dev/null and its
/// standard output goes to standard error, so the tool's own output stays its own. Not for
/// handlers, which docrouted starts confined (``ConfinedProcess``).
package struct ChildProcess: Sendable {
    /// The child's process id.
    package let id: Int32

    /// `posix_spawnp(3)` of `arguments` (bytes: a file name need not be UTF-8, and the child must
    /// get exactly its bytes), the first one the program, with `environment` as its whole
    /// environment. The child starts with the default action for the signals this
    /// runtime ignores or handles (SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD) and none
    /// blocked. Throws the `Errno` the spawn failed with (`ENOENT` when there is no such program).
    package static func spawn(arguments: [[UInt8]], environment: [String: String]) throws(Errno) -> ChildProcess {
        precondition(!arguments.isEmpty, "a child needs a program to run")
        let argv = arguments.map { cString($0) }
        let envp = environment.map { cString(Array("\($0.key)=\($0.value)".utf8)) }
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
        guard result == 0 else { throw Errno(rawValue: result) }
        return ChildProcess(id: pid)
    }

    /// `waitpid(2)` until the child ends, again after `EINTR`: its wait status (the low 7 bits
    /// the signal that killed it, else the exit status in bits 8-15). Blocks: call it from a
    /// thread of its own. `ECHILD` means someone else reaped it.
    package func waitForExit() throws(Errno) -> Int32 {
        var status: Int32 = 0
        _ = try Errno.retryingOnInterrupt { waitpid(id, &status, 0) }
        return status
    }

    private static func cString(_ bytes: [UInt8]) -> UnsafeMutablePointer<CChar> {
        let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
        for (index, byte) in bytes.enumerated() { pointer[index] = CChar(bitPattern: byte) }
        pointer[bytes.count] = 0
        return pointer
    }
}
