import SystemPackage

/// Why a handler was not started; `description` says what to do about it.
package struct HandlerLaunchError: Error, CustomStringConvertible, Sendable {
    /// Stable error codes.
    package enum Code: String, Sendable, Hashable {
        /// docrouted is not root and the handler's `DocRouteUser` is not docrouted's own user.
        case otherUser = "launch-other-user"
        /// `DocRouteUser` names no user of this system.
        case unknownUser = "launch-unknown-user"
        /// Under systemd: the handler's user cannot be a `docroute-handler@` instance (root, or a
        /// name systemd cannot take).
        case noUnitInstance = "launch-no-unit-instance"
        /// fork, the identity change, the capability drop or execve failed.
        case spawnFailed = "launch-failed"
        /// The flag file that starts the handler's path unit could not be written.
        case flagFailed = "launch-flag-failed"
    }

    package var code: Code
    package var message: String

    package var description: String { "\(message) [\(code.rawValue)]" }

    /// Which step of `docroute_spawn_handler` failed, in words.
    static func step(_ step: Int32) -> String {
        switch step {
        case 1: "fork"
        case 2: "clearing the ambient capabilities"
        case 3: "setting the supplementary groups"
        case 4: "setting the group id"
        case 5: "dropping the capability bounding set"
        case 6: "setting the user id"
        case 7: "emptying the capability sets"
        case 8: "setting no_new_privs"
        case 9: "execve"
        case 10: "pipe"
        default: "step \(step)"
        }
    }

    static func spawn(_ command: [String], step: Int32, errno: Errno) -> HandlerLaunchError {
        let advice = step == 9
            ? "check that \(command[0]) exists, is executable by the handler's user and is an absolute path"
            : "docrouted cannot drop to the handler's identity; run it as root or under systemd"
        return HandlerLaunchError(code: .spawnFailed, message: "\(Self.step(step)) failed for \(command.joined(separator: " ")): \(errno) (\(advice))")
    }
}
