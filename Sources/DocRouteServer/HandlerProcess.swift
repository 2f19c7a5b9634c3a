import DocRoutePlatform
import Foundation
import SystemPackage

/// One started handler process: a ``ConfinedProcess`` (DocRoutePlatform), which empties every
/// capability set, the ambient and (given CAP_SETPCAP) the bounding set before execve, so a
/// handler never runs with docrouted's privileges.
package struct HandlerProcess: Sendable {
    /// The identity the child takes before execve; nil keeps docrouted's (a non-root daemon).
    typealias Identity = ConfinedProcess.Identity

    let process: ConfinedProcess

    /// The handler's process id.
    var pid: Int32 { process.pid }

    /// Starts `command` (its first word the program) with `environment`. Throws
    /// ``HandlerLaunchError`` naming the step that failed.
    static func spawn(_ command: [String], environment: [String: String], as identity: Identity?) throws(HandlerLaunchError) -> HandlerProcess {
        do throws(ConfinedProcess.SpawnFailure) {
            return HandlerProcess(process: try ConfinedProcess.spawn(command, environment: environment, as: identity))
        } catch {
            throw HandlerLaunchError.spawn(command, step: error.step, errno: error.errno)
        }
    }

    /// Calls `exited` with the exit status (128 + signal when killed) once the process ends, from a
    /// thread of its own that waits in waitpid(2); -1 when it cannot be waited for.
    func onExit(_ exited: @escaping @Sendable (Int32) -> Void) {
        let process = self.process
        let thread = Thread {
            do throws(Errno) {
                exited(try process.waitForExit())
            } catch {
                // ECHILD: someone else reaped it; the handler is gone either way.
                exited(-1)
            }
        }
        thread.name = "handler-wait-\(process.pid)"
        thread.start()
    }

    /// Asks the handler to end (SIGTERM). One that has ended already needs nothing more; one that
    /// cannot be signalled (EPERM: it took another identity than the one docrouted can signal) is
    /// left to end with its connection.
    func terminate() {
        _ = try? process.send(.terminate)
    }
}
