import CDocRouteShim
import Foundation
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// One started handler process: forked and executed by `docroute_spawn_handler` (CDocRouteShim),
/// which empties every capability set, the ambient and (given CAP_SETPCAP) the bounding set before
/// execve, so a handler never runs with docrouted's privileges. Foundation's `Process` cannot do
/// that between fork and exec.
package struct HandlerProcess: Sendable {
    /// The identity the child takes before execve; nil keeps docrouted's (a non-root daemon).
    struct Identity: Sendable {
        var uid: UInt32
        var gid: UInt32
        var groups: [UInt32]
    }

    let pid: pid_t

    /// Starts `command` (its first word the program) with `environment`. Throws
    /// ``HandlerLaunchError`` naming the step that failed.
    static func spawn(_ command: [String], environment: [String: String], as identity: Identity?) throws(HandlerLaunchError) -> HandlerProcess {
        let arguments = command.map { strdup($0) } + [nil]
        let variables = environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in arguments { free(pointer) }
            for pointer in variables { free(pointer) }
        }
        var step: Int32 = 0
        let groups = identity?.groups ?? []
        let pid = groups.withUnsafeBufferPointer { groupBuffer in
            docroute_spawn_handler(command[0], arguments, variables, identity == nil ? 0 : 1,
                                   identity?.uid ?? 0, identity?.gid ?? 0, groupBuffer.baseAddress, groupBuffer.count, &step)
        }
        guard pid > 0 else { throw HandlerLaunchError.spawn(command, step: step, errno: Errno(rawValue: errno)) }
        return HandlerProcess(pid: pid)
    }

    /// Calls `exited` with the exit status (128 + signal when killed) once the process ends, from a
    /// thread of its own that waits in waitpid(2).
    func onExit(_ exited: @escaping @Sendable (Int32) -> Void) {
        let pid = self.pid
        let thread = Thread {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 {
                guard errno == EINTR else {
                    exited(-1)
                    return
                }
            }
            let signal = status & 0x7f
            exited(signal == 0 ? (status >> 8) & 0xff : 128 + signal)
        }
        thread.name = "handler-wait-\(pid)"
        thread.start()
    }

    func terminate() {
        kill(pid, SIGTERM)
    }
}
