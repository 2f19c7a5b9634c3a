import Foundation
import SystemPackage
import Testing
import DocRouteTestSupport
@testable import DocRoutePlatform
@testable import DocRouteServer

#if canImport(Glibc)
import Glibc
#endif

/// Starting a program with none of the daemon's privileges (the C shim's spawn), waiting for it and
/// signalling it, through the platform layer.
@Suite struct ConfinedProcessTests {
    /// A program that is not there fails at execve, with the kernel's ENOENT, and the launch error
    /// names that step in words.
    @Test func aMissingProgramFailsAtExecveWithItsErrno() throws {
        let command = ["/nonexistent/docroute-handler", "--serve"]
        #expect(throws: ConfinedProcess.SpawnFailure(step: .execute, errno: .noSuchFileOrDirectory)) {
            try ConfinedProcess.spawn(command, environment: [:], as: nil)
        }
        let error = #expect(throws: HandlerLaunchError.self) { try HandlerProcess.spawn(command, environment: [:], as: nil) }
        #expect(error?.code == .spawnFailed)
        #expect(error?.message.hasPrefix("execve failed for /nonexistent/docroute-handler --serve: No such file or directory") == true)
    }

    /// The child gets exactly the environment given, and its exit status comes back from the wait.
    @Test func theExitStatusComesBackFromTheWait() throws {
        let process = try ConfinedProcess.spawn(
            ["/bin/sh", "-c", #"test "$DOCROUTE_PROBE" = yes && test -z "$HOME" && exit 7; exit 1"#],
            environment: ["DOCROUTE_PROBE": "yes"], as: nil)
        #expect(try process.waitForExit() == 7)
    }

    /// A signal ends the child, the wait reports it as a shell does (128 + the signal), and a child
    /// that was reaped is reported gone rather than signalled.
    @Test func terminatingEndsTheChildAndAGoneChildIsNoError() throws {
        let process = try ConfinedProcess.spawn(["/bin/sleep", "30"], environment: [:], as: nil)
        #expect(try process.send(.terminate) == true)
        #expect(try process.waitForExit() == 128 + SIGTERM)
        #expect(try process.send(.terminate) == false)
    }

    /// As root, the child takes the identity given before execve, and keeps no capability.
    @Test(.enabled(if: geteuid() == 0, "only root may start a process as another user"))
    func theChildRunsAsTheIdentityGiven() throws {
        let process = try ConfinedProcess.spawn(
            ["/bin/sh", "-c", #"test "$(id -u):$(id -g):$(id -G)" = "65534:65534:65534" && grep -q '^CapEff:.0000000000000000$' /proc/self/status"#],
            environment: ["PATH": "/usr/bin:/bin"], as: ConfinedProcess.Identity(uid: 65534, gid: 65534, groups: [65534]))
        #expect(try process.waitForExit() == 0)
    }

    /// Without root, taking another identity fails at the first step that needs it.
    @Test(.enabled(if: geteuid() != 0, "root may take any identity"))
    func anotherIdentityIsRefusedWithoutRoot() throws {
        #expect(throws: ConfinedProcess.SpawnFailure(step: .setGroups, errno: .notPermitted)) {
            try ConfinedProcess.spawn(["/bin/true"], environment: [:], as: ConfinedProcess.Identity(uid: 65534, gid: 65534, groups: [65534]))
        }
    }
}
