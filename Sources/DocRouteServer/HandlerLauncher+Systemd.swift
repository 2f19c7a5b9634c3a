import DocRouteConfiguration
import DocRouteHandlers
import DocRoutePlatform
import Logging
import SystemPackage

/// Launch on demand under systemd: docrouted writes a flag file, the handler's path unit
/// (`docroute-handler@<user>.path`, `PathChanged=/run/docroute/launch/<user>`) starts its service.
/// docrouted needs no privilege for that: no D-Bus, no polkit, only its own runtime folder.
extension HandlerLauncher {

    func requestFromSystemd(_ handler: RegisteredHandler, key: String, flagDirectory: String) {
        let bundle = handler.bundleIdentifier
        let user = handler.manifest.user
        guard let instance = HandlerAccount.unitInstance(for: user), HandlerAccount.resolve(user).map({ $0.uid != 0 }) ?? true else {
            refused(bundle, key: key, HandlerLaunchError(code: .noUnitInstance, message: "handler \(bundle) not launched: under systemd a handler runs as a docroute-handler@USER service of its own user, and its DocRouteUser is '\(user)'; give it a DocRouteUser of its own (not root) in \(handler.manifest.file), then see docroutectl handlers --unit \(bundle)"))
            return
        }
        let flag = flagDirectory + "/" + instance
        do {
            try Self.writeFlag(flag, directory: flagDirectory, bundle: bundle)
        } catch {
            refused(bundle, key: key, HandlerLaunchError(code: .flagFailed, message: "handler \(bundle) not launched: cannot write \(flag): \(error) (docrouted must be able to write \(flagDirectory); under systemd RuntimeDirectory=docroute gives it /run/docroute)"))
            return
        }
        logger.info("handler launch requested from systemd", metadata: [
            "bundle-id": "\(bundle)", "unit": "docroute-handler@\(instance).service", "path": "\(flag)", "message-id": "handler-launched",
        ])
        // Asked again only after a pause, unless it subscribes in between.
        backOff(key, because: "asked of systemd (docroute-handler@\(instance).path)", level: .debug)
    }

    /// Writes `bundle` into the flag file (creating its folder), so inotify reports a close after
    /// writing to the path unit. Never follows a symbolic link.
    static func writeFlag(_ flag: String, directory: String, bundle: String) throws {
        try FilePath(directory).makeDirectory(permissions: 0o755)
        let folder = try DeliveryError.performing("open folder", directory) { try FileDescriptor.openDirectory(atPath: FilePath(directory)) }
        defer { folder.closeIgnoringErrors() }
        guard let name = FilePath(flag).lastComponent else { throw Errno.invalidArgument }
        let file = try DeliveryError.performing("open", flag) { try folder.open(name, .writeOnly, options: [.create, .truncate], permissions: 0o644) }
        defer { file.closeIgnoringErrors() }
        let text = Array((bundle + "\n").utf8)
        try text.withUnsafeBytes { buffer in try DeliveryError.performing("write", flag) { try file.writeAll(from: buffer) } }
    }
}
