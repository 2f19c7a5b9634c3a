import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process in a process group of its own, with its standard error captured, so a shell
/// pipeline and everything it forks stop together with one signal to the group.
final class GroupedChild: @unchecked Sendable {
    let pid: pid_t
    private let captured = LockedText()

    init(_ arguments: [String]) throws {
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { throw BenchError("pipe: \(String(cString: strerror(errno)))") }
        let argv = arguments.map { strdup($0) }
        let envp = ProcessInfo.processInfo.environment.filter { $0.key != "NOTIFY_SOCKET" }.map { strdup("\($0.key)=\($0.value)") }
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], STDERR_FILENO)
        posix_spawn_file_actions_addclose(&actions, pipeEnds[0])
        posix_spawn_file_actions_addclose(&actions, pipeEnds[1])

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The runtime ignores SIGPIPE; a shell pipeline must get it back to end like it does anywhere else.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGCHLD] { sigaddset(&defaults, signal) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP))

        var child: pid_t = 0
        let result = (argv + [nil]).withUnsafeBufferPointer { argvBuffer in
            (envp + [nil]).withUnsafeBufferPointer { envpBuffer in
                posix_spawn(&child, argv[0]!, &actions, &attributes,
                            UnsafeMutablePointer(mutating: argvBuffer.baseAddress!),
                            UnsafeMutablePointer(mutating: envpBuffer.baseAddress!))
            }
        }
        close(pipeEnds[1])
        guard result == 0 else {
            close(pipeEnds[0])
            throw BenchError("cannot run \(arguments[0]): \(String(cString: strerror(result)))")
        }
        pid = child
        Self.running.insert(child)
        // Drained all along, so a chatty child never blocks on a full pipe.
        let readEnd = pipeEnds[0]
        let captured = captured
        Thread {
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                captured.append(String(decoding: chunk[..<count], as: UTF8.self))
            }
            close(readEnd)
        }.start()
    }

    /// Everything the child group wrote to standard error so far.
    var standardError: String { captured.text }

    /// Waits until standard error contains `text`; false after `timeout` seconds or if the child ended.
    func waitForStandardError(containing text: String, timeout: Double) -> Bool {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(timeout * 1e9)
        while DispatchTime.now().uptimeNanoseconds < deadline {
            if standardError.contains(text) { return true }
            if waitpid(pid, nil, WNOHANG) == pid { return false }
            usleep(10_000)
        }
        return false
    }

    /// SIGTERM to the whole group, SIGKILL after two seconds; reaps the direct child.
    func stop() {
        Self.running.remove(pid)
        kill(-pid, SIGTERM)
        for _ in 0..<200 {
            if waitpid(pid, nil, WNOHANG) != 0 { break }
            usleep(10_000)
        }
        kill(-pid, SIGKILL)
        _ = waitpid(pid, nil, WNOHANG)
    }
}

extension GroupedChild {
    /// Groups started and not yet stopped: an interrupted benchmark must not leave an inotifywait behind.
    static let running = LockedSet()
    nonisolated(unsafe) private static var interruptSources: [DispatchSourceSignal] = []

    /// On SIGINT or SIGTERM, stops every running group and daemon, then exits (call once, early).
    static func stopAllOnInterrupt() {
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler {
                for pid in running.all { kill(-pid, SIGTERM) }
                for pid in BenchDaemon.running.all { kill(pid, SIGTERM) }
                exit(128 + signalNumber)
            }
            source.resume()
            interruptSources.append(source)
        }
    }
}

/// A set of process ids shared between threads.
final class LockedSet: @unchecked Sendable {
    private let lock = NSLock()
    private var pids: Set<pid_t> = []

    func insert(_ pid: pid_t) { lock.lock(); pids.insert(pid); lock.unlock() }
    func remove(_ pid: pid_t) { lock.lock(); pids.remove(pid); lock.unlock() }
    var all: Set<pid_t> { lock.lock(); defer { lock.unlock() }; return pids }
}

/// Text appended by one thread and read by another.
final class LockedText: @unchecked Sendable {
    private let lock = NSLock()
    private var storage = ""

    func append(_ more: String) {
        lock.lock()
        storage += more
        lock.unlock()
    }

    var text: String {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }
}
