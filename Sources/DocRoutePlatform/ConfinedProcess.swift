import CDocRouteShim
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A child process started without any of this process's privileges (`docroute_spawn_handler` in
/// the C shim): between fork and execve, in the child, default signal dispositions and an empty
/// mask, every descriptor above 2 closed, the ambient capabilities cleared, optionally another
/// user's groups, gid and uid, the bounding set dropped (given `CAP_SETPCAP`), the effective,
/// permitted and inheritable sets emptied, and `no_new_privs` set. Foundation's `Process` cannot
/// do that between fork and exec. Linux only.
package struct ConfinedProcess: Sendable {
    /// The identity the child takes before execve.
    package struct Identity: Sendable, Hashable {
        package var uid: UInt32
        package var gid: UInt32
        package var groups: [UInt32]

        package init(uid: UInt32, gid: UInt32, groups: [UInt32]) {
            self.uid = uid
            self.gid = gid
            self.groups = groups
        }
    }

    /// The step of the start that failed (the shim's `docroute_spawn_step`).
    package enum Step: Sendable, Hashable {
        case pipe
        case fork
        case clearAmbientCapabilities
        case setGroups
        case setGroupID
        case dropBoundingSet
        case setUserID
        case emptyCapabilitySets
        case setNoNewPrivileges
        case execute
        /// A number the shim does not define (a shim newer than this code).
        case unknown(Int32)

        /// The step the shim reported as `raw`.
        init(_ raw: docroute_spawn_step) {
            switch raw {
            case docroute_spawn_pipe: self = .pipe
            case docroute_spawn_fork: self = .fork
            case docroute_spawn_ambient: self = .clearAmbientCapabilities
            case docroute_spawn_groups: self = .setGroups
            case docroute_spawn_gid: self = .setGroupID
            case docroute_spawn_bounding: self = .dropBoundingSet
            case docroute_spawn_uid: self = .setUserID
            case docroute_spawn_capset: self = .emptyCapabilitySets
            case docroute_spawn_no_new_privs: self = .setNoNewPrivileges
            case docroute_spawn_exec: self = .execute
            default: self = .unknown(Int32(bitPattern: raw.rawValue))
            }
        }
    }

    /// Why a child was not started: the step, and the `errno` it failed with.
    package struct SpawnFailure: Error, Sendable, Hashable {
        package var step: Step
        package var errno: Errno
    }

    /// The child's process id.
    package let pid: Int32

    /// Starts `command` (its first word the program's absolute path, the rest its arguments) with
    /// exactly `environment`, as `identity` (nil keeps this process's uid, gid and groups).
    /// Returns once the child runs the program: a failure before or in execve is thrown, with the
    /// child reaped.
    package static func spawn(_ command: [String], environment: [String: String], as identity: Identity?) throws(SpawnFailure) -> ConfinedProcess {
        guard let program = command.first else { throw SpawnFailure(step: .execute, errno: .invalidArgument) }
        let variables = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        var step: Int32 = 0
        var savedErrno: Int32 = 0
        let groups = identity?.groups ?? []
        let pid = withCStringArray(command) { arguments in
            withCStringArray(variables) { environment in
                groups.withUnsafeBufferPointer { groupBuffer in
                    let pid = docroute_spawn_handler(program, arguments, environment, identity == nil ? 0 : 1,
                                                     identity?.uid ?? 0, identity?.gid ?? 0, groupBuffer.baseAddress, groupBuffer.count, &step)
                    savedErrno = Glibc.errno
                    return pid
                }
            }
        }
        guard pid > 0 else {
            throw SpawnFailure(step: Step(docroute_spawn_step(rawValue: UInt32(bitPattern: step))), errno: Errno(rawValue: savedErrno))
        }
        return ConfinedProcess(pid: pid)
    }

    /// Waits until the child ends (`waitpid(2)`, blocking the calling thread, retried on `EINTR`)
    /// and reaps it: its exit status, or 128 + the signal that ended it, as a shell reports it.
    package func waitForExit() throws(Errno) -> Int32 {
        var status: Int32 = 0
        _ = try Errno.retryingOnInterrupt { waitpid(pid, &status, 0) }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    /// Sends `signal` to the child; `false` when it had ended already.
    @discardableResult
    package func send(_ signal: ProcessSignal) throws(Errno) -> Bool {
        try signal.send(to: pid)
    }

    /// `strings` as a NULL-terminated array of C strings, for as long as `body` runs.
    private static func withCStringArray<Result>(
        _ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> Result
    ) -> Result {
        let pointers = strings.map { string in
            let bytes = Array(string.utf8CString)
            let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count)
            pointer.initialize(from: bytes, count: bytes.count)
            return Optional(pointer)
        }
        defer { for pointer in pointers { pointer?.deallocate() } }
        return body(pointers + [nil])
    }
}
