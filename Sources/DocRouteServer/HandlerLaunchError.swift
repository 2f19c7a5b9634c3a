import DocRouteErrors
import DocRoutePlatform
import SystemPackage

/// Why a handler was not started; `description` says what to do about it.
package typealias HandlerLaunchError = DocRouteError<HandlerLaunchErrorCode>

/// The stable codes of ``HandlerLaunchError``.
package struct HandlerLaunchErrorCode: ErrorCodeProtocol {
    /// The code's text, e.g. `launch-failed`.
    package let rawValue: String
    private init(_ rawValue: String) { self.rawValue = rawValue }

    /// docrouted is not root and the handler's `DocRouteUser` is not docrouted's own user.
    package static let otherUser = Self("launch-other-user")
    /// `DocRouteUser` names no user of this system.
    package static let unknownUser = Self("launch-unknown-user")
    /// Under systemd: the handler's user cannot be a `docroute-handler@` instance (root, or a
    /// name systemd cannot take).
    package static let noUnitInstance = Self("launch-no-unit-instance")
    /// fork, the identity change, the capability drop or execve failed.
    package static let spawnFailed = Self("launch-failed")
    /// The flag file that starts the handler's path unit could not be written.
    package static let flagFailed = Self("launch-flag-failed")

    /// `message [code]`: the advice reads first.
    package static func describe(_ error: HandlerLaunchError) -> String { "\(error.message) [\(error.code.rawValue)]" }
}

extension DocRouteError where Code == HandlerLaunchErrorCode {
    /// Which step of starting the handler failed, in words.
    static func step(_ step: ConfinedProcess.Step) -> String {
        switch step {
        case .fork: "fork"
        case .clearAmbientCapabilities: "clearing the ambient capabilities"
        case .setGroups: "setting the supplementary groups"
        case .setGroupID: "setting the group id"
        case .dropBoundingSet: "dropping the capability bounding set"
        case .setUserID: "setting the user id"
        case .emptyCapabilitySets: "emptying the capability sets"
        case .setNoNewPrivileges: "setting no_new_privs"
        case .execute: "execve"
        case .pipe: "pipe"
        case .unknown(let number): "step \(number)"
        }
    }

    static func spawn(_ command: [String], step: ConfinedProcess.Step, errno: Errno) -> HandlerLaunchError {
        let advice = step == .execute
            ? "check that \(command[0]) exists, is executable by the handler's user and is an absolute path"
            : "docrouted cannot drop to the handler's identity; run it as root or under systemd"
        return HandlerLaunchError(code: .spawnFailed, message: "\(Self.step(step)) failed for \(command.joined(separator: " ")): \(errno) (\(advice))", cause: errno)
    }
}
