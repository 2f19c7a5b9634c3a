import DocRouteHandlers
import Foundation
import Logging

/// Starts a handler (`DocRouteLaunchCommand`) when a document is committed for it and no
/// connection is subscribed as it: "the app is not running, so the system launches it".
///
/// At most one instance per handler. A handler that keeps exiting without subscribing is started
/// again after an exponential backoff (1 s doubling to 5 min), so a broken one cannot spin.
public actor HandlerLauncher {
    struct Launch {
        var process: Process
        var subscribed = false
    }

    let socketPath: String
    let logger: Logger
    var running: [String: Launch] = [:]
    var failures: [String: Int] = [:]
    var notBefore: [String: ContinuousClock.Instant] = [:]
    let clock = ContinuousClock()
    /// Told of launches that fail, for `status`'s last error.
    let activity: DaemonActivity?

    public init(socketPath: String, activity: DaemonActivity? = nil, logger: Logger) {
        self.socketPath = socketPath
        self.activity = activity
        self.logger = logger
    }

    /// Starts the handler unless it runs already, has no launch command, or is backing off.
    public func launchIfNeeded(_ handler: RegisteredHandler) {
        let key = handler.bundleIdentifier.lowercased()
        guard let command = handler.manifest.launchCommand, running[key] == nil else { return }
        if let wait = notBefore[key], clock.now < wait { return }
        let process = Process()
        var arguments = command
        if getuid() == 0, let (uid, gid) = Self.resolve(handler.manifest.user), uid != 0 {
            // Run as the handler's own user, with its groups, never as root.
            arguments = ["/usr/bin/setpriv", "--reuid=\(uid)", "--regid=\(gid)", "--init-groups", "--"] + arguments
        }
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        var environment = ProcessInfo.processInfo.environment
        for key in ["LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"] { environment[key] = nil }
        environment["DOCROUTE_SOCKET"] = socketPath
        environment["DOCROUTE_BUNDLE_IDENTIFIER"] = handler.bundleIdentifier
        process.environment = environment
        let bundle = handler.bundleIdentifier
        process.terminationHandler = { [weak self] finished in
            let status = finished.terminationStatus
            Task { await self?.exited(bundle, status: status) }
        }
        do {
            try process.run()
            running[key] = Launch(process: process)
            logger.info("handler launched", metadata: ["bundle-id": "\(bundle)", "pid": "\(process.processIdentifier)", "message-id": "handler-launched"])
        } catch {
            // Foundation's error (NSCocoaErrorDomain Code=260) names neither the file nor the fix.
            let program = arguments[0]
            let reason = access(program, F_OK) != 0 ? "\(program) does not exist"
                : access(program, X_OK) != 0 ? "\(program) is not executable" : "\(program) cannot be started (\(error))"
            let message = "cannot launch the handler: \(reason); fix DocRouteLaunchCommand in \(handler.manifest.file)"
            logger.error("\(message)", metadata: ["bundle-id": "\(bundle)", "command": "\(command.joined(separator: " "))"])
            activity?.failed(bundle, message)
            backOff(key, after: "could not be launched")
        }
    }

    /// The handler subscribed: it started well, so its backoff is forgotten.
    public func subscribed(_ bundleIdentifier: String) {
        let key = bundleIdentifier.lowercased()
        running[key]?.subscribed = true
        failures[key] = nil
        notBefore[key] = nil
    }

    /// Stops every handler this launcher started (on daemon shutdown).
    public func terminateAll() {
        for (_, launch) in running where launch.process.isRunning { launch.process.terminate() }
    }

    func exited(_ bundleIdentifier: String, status: Int32) {
        let key = bundleIdentifier.lowercased()
        let subscribed = running[key]?.subscribed ?? false
        running[key] = nil
        logger.info("handler exited", metadata: ["bundle-id": "\(bundleIdentifier)", "status": "\(status)"])
        if !subscribed {
            activity?.failed(bundleIdentifier, "launched, but exited with status \(status) without subscribing")
            backOff(key, after: "exited without subscribing")
        }
    }

    func backOff(_ key: String, after what: String) {
        let count = (failures[key] ?? 0) + 1
        failures[key] = count
        let seconds = min(300, 1 << min(count - 1, 9))
        notBefore[key] = clock.now + .seconds(seconds)
        logger.warning("handler \(what); next launch in \(seconds) s at the earliest", metadata: ["bundle-id": "\(key)"])
    }

    /// The owner a handler's copies get: its own user, when that is not docrouted's and docrouted
    /// may give files away (root, or CAP_CHOWN as docroute.service grants); nil otherwise.
    ///
    /// The group is the handler's own too: docrouted's group is the admin group, which gets
    /// status, never documents. Not running as root (docroute.service: User=docroute with
    /// CAP_CHOWN), docrouted keeps its way in through an ACL entry for its uid alone
    /// (``sandboxAccessUserID``), without CAP_DAC_OVERRIDE.
    static func copyOwner(for user: HandlerUser) -> (uid: UInt32, gid: UInt32)? {
        guard let (uid, gid) = resolve(user), uid != geteuid(), mayChangeOwners else { return nil }
        return (uid, gid)
    }

    /// Folders in a sandbox: the handler's alone.
    static let sandboxFolderMode: mode_t = 0o700

    /// Who gets an ACL entry on what docrouted hands to handlers: itself, when it is not root.
    static var sandboxAccessUserID: UInt32? { geteuid() == 0 ? nil : geteuid() }

    /// Root, or CAP_CHOWN in the effective set (bit 0 of CapEff in /proc/self/status).
    static let mayChangeOwners: Bool = {
        if geteuid() == 0 { return true }
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("CapEff:") }),
              let mask = UInt64(line.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? "", radix: 16)
        else { return false }
        return mask & 1 != 0
    }()

    static func resolve(_ user: HandlerUser) -> (UInt32, UInt32)? {
        switch user {
        case .uid(let uid):
            return (uid, UserDatabase.user(id: uid)?.gid ?? uid)
        case .name(let name):
            return UserDatabase.user(named: name).map { ($0.uid, $0.gid) }
        }
    }
}
