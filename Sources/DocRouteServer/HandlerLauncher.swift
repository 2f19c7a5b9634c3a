import DocRouteConfiguration
import DocRouteHandlers
import DocRoutePlatform
import Foundation
import Logging
import SystemPackage

/// Starts a handler (`DocRouteLaunchCommand`) when a document is committed for it and no
/// connection is subscribed as it: "the app is not running, so the system launches it".
///
/// A handler never runs with docrouted's identity or capabilities:
/// - Under systemd (`launch_flag_directory` set) docrouted starts nothing itself: it writes the flag
///   file `<launch_flag_directory>/<DocRouteUser>`, whose `docroute-handler@<DocRouteUser>.path` unit
///   starts the handler's own hardened service (see `docroutectl handlers --unit`).
/// - Otherwise a root docrouted starts the command as the handler's user with its groups; a
///   docrouted that is not root starts only handlers whose user is its own and refuses the others.
///   Either way the child's capability sets (ambient included) are emptied before execve
///   (``HandlerProcess``).
///
/// At most one instance per handler. A handler that keeps exiting without subscribing (or, under
/// systemd, keeps not subscribing) is started again after an exponential backoff (1 s doubling to
/// 5 min), so a broken one cannot spin.
package actor HandlerLauncher {
    struct Launch {
        var process: HandlerProcess
        var subscribed = false
    }

    let socketPath: String
    /// Where systemd's path units watch for launch requests; nil: docrouted starts handlers itself.
    let flagDirectory: String?
    let logger: Logger
    var running: [String: Launch] = [:]
    var failures: [String: Int] = [:]
    var notBefore: [String: ContinuousClock.Instant] = [:]
    let clock = ContinuousClock()
    /// Told of launches that fail, for `status`'s last error.
    let activity: (any DispatchObserver)?

    package init(socketPath: String, flagDirectory: String? = nil, activity: (any DispatchObserver)? = nil, logger: Logger) {
        self.socketPath = socketPath
        self.flagDirectory = flagDirectory
        self.activity = activity
        self.logger = logger
    }

    /// Starts the handler unless it runs already, has no launch command, or is backing off.
    package func launchIfNeeded(_ handler: RegisteredHandler) {
        let key = handler.bundleIdentifier.lowercased()
        guard let command = handler.manifest.launchCommand, running[key] == nil else { return }
        if let wait = notBefore[key], clock.now < wait { return }
        if let flagDirectory {
            requestFromSystemd(handler, key: key, flagDirectory: flagDirectory)
            return
        }
        let bundle = handler.bundleIdentifier
        do throws(HandlerLaunchError) {
            let identity = try Self.identity(for: handler)
            var environment = ProcessInfo.processInfo.environment
            for key in ["LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"] { environment[key] = nil }
            environment["DOCROUTE_SOCKET"] = socketPath
            environment["DOCROUTE_BUNDLE_IDENTIFIER"] = bundle
            let process = try HandlerProcess.spawn(command, environment: environment, as: identity)
            running[key] = Launch(process: process)
            process.onExit { [weak self] status in
                Task { await self?.exited(bundle, status: status) }
            }
            logger.info("handler launched", metadata: [
                "bundle-id": "\(bundle)", "pid": "\(process.pid)", "uid": "\(identity?.uid ?? ProcessIdentity.effectiveUserID)", "message-id": "handler-launched",
            ])
        } catch {
            refused(bundle, key: key, Self.explained(error, command: command, manifest: handler.manifest.file))
        }
    }

    /// The identity a started handler takes: its own user's (root docrouted), or none (docrouted's
    /// own, allowed only when that is the handler's user).
    static func identity(for handler: RegisteredHandler) throws(HandlerLaunchError) -> HandlerProcess.Identity? {
        let user = handler.manifest.user
        guard let (uid, gid) = HandlerAccount.resolve(user) else {
            throw HandlerLaunchError(code: .unknownUser, message: "handler \(handler.bundleIdentifier) not launched: its DocRouteUser '\(user)' is no user of this system; create the user or correct \(handler.manifest.file)")
        }
        let ownUID = ProcessIdentity.effectiveUserID
        if ownUID == 0 {
            return HandlerProcess.Identity(uid: uid, gid: gid, groups: supplementaryGroups(of: user, gid: gid))
        }
        guard uid == ownUID else {
            throw HandlerLaunchError(code: .otherUser, message: "handler \(handler.bundleIdentifier) not launched: its DocRouteUser is \(user) (uid \(uid)) and docrouted runs as uid \(ownUID), not root, so it starts only handlers of its own user; run the handler under systemd (docroutectl handlers --unit \(handler.bundleIdentifier)), run docrouted as root, or start the handler yourself")
        }
        return nil
    }

    /// The groups `user` belongs to (getgrouplist), `gid` alone for a numeric uid without a name.
    static func supplementaryGroups(of user: HandlerUser, gid: UInt32) -> [UInt32] {
        guard case .name(let name) = user else { return [gid] }
        return UserDatabase.groups(of: name, primary: gid)
    }

    /// A failed execve said in words: the launch command missing or not executable names the
    /// manifest to fix (errno alone names neither the file nor the fix).
    static func explained(_ error: HandlerLaunchError, command: [String], manifest: String) -> HandlerLaunchError {
        guard error.code == .spawnFailed, let program = command.first else { return error }
        let reason = !FilePath(program).isAccessible(.exists) ? "\(program) does not exist"
            : !FilePath(program).isAccessible(.execute) ? "\(program) is not executable" : nil
        guard let reason else { return error }
        return HandlerLaunchError(code: .spawnFailed, message: "cannot launch the handler: \(reason); fix DocRouteLaunchCommand in \(manifest)")
    }

    /// Logs a launch that did not happen, records it as the handler's last error, and backs off so
    /// the same refusal is not logged for every document.
    func refused(_ bundle: String, key: String, _ error: HandlerLaunchError) {
        logger.error("handler could not be launched: \(error)", metadata: ["bundle-id": "\(bundle)", "code": "\(error.code.rawValue)"])
        activity?.failed(bundle, error.description)
        backOff(key, because: "not launched")
    }

    /// The handler subscribed: it started well, so its backoff is forgotten.
    package func subscribed(_ bundleIdentifier: String) {
        let key = bundleIdentifier.lowercased()
        running[key]?.subscribed = true
        failures[key] = nil
        notBefore[key] = nil
    }

    /// Stops every handler this launcher started (on daemon shutdown).
    package func terminateAll() {
        for (_, launch) in running { launch.process.terminate() }
    }

    func exited(_ bundleIdentifier: String, status: Int32) {
        let key = bundleIdentifier.lowercased()
        let subscribed = running[key]?.subscribed ?? false
        running[key] = nil
        logger.info("handler exited", metadata: ["bundle-id": "\(bundleIdentifier)", "status": "\(status)"])
        if !subscribed {
            activity?.failed(bundleIdentifier, "launched, but exited with status \(status) without subscribing")
            backOff(key, because: "exited without subscribing")
        }
    }

    func backOff(_ key: String, because reason: String, level: Logger.Level = .warning) {
        let count = (failures[key] ?? 0) + 1
        failures[key] = count
        let seconds = min(300, 1 << min(count - 1, 9))
        notBefore[key] = clock.now + .seconds(seconds)
        logger.log(level: level, "handler \(reason); next launch in \(seconds) s at the earliest", metadata: ["bundle-id": "\(key)"])
    }
}
