import ArgumentParser
import DocRouteConfiguration
import DocRouteHandlers
import DocRoutePlatform
import Foundation

/// What an administrator installs so that systemd starts a handler on demand, as a shell script
/// (`docroutectl handlers --unit ID | sh`): the instance's environment file, a drop-in with the
/// handler's command and its container, and the path unit enabled.
struct HandlerUnitLines {
    let handler: RegisteredHandler
    let configuration: DaemonConfiguration

    /// The folder docroute-handler@.path watches; a configuration naming another one needs its own unit.
    static let unitFlagDirectory = "/run/docroute/launch"

    func script() throws -> String {
        let bundle = handler.bundleIdentifier
        // What the manifest says is no misuse of the command line: CtlError (exit 1, no usage).
        guard let command = handler.manifest.launchCommand else {
            throw CtlError("\(bundle) has no DocRouteLaunchCommand in \(handler.manifest.file): add the command that starts it (it subscribes itself), or run it with docroutectl subscribe \(bundle) --exec CMD")
        }
        guard let instance = HandlerAccount.unitInstance(for: handler.manifest.user) else {
            let suggested = bundle.split(separator: ".").last.map(String.init) ?? "handler"
            guard Self.isRoot(handler.manifest.user) else {
                throw CtlError("""
                    \(bundle) runs as \(Self.shown(handler.manifest.user)) (DocRouteUser in \(handler.manifest.file)), which cannot \
                    name a docroute-handler@ unit: a unit's user is a name of letters, digits, '_', '-' and '.', not starting \
                    with '-' or '.', at most 32 long. Name such a user in DocRouteUser (for instance '\(suggested)')
                    """)
            }
            throw CtlError("""
                \(bundle) runs as \(Self.shown(handler.manifest.user)) (DocRouteUser in \(handler.manifest.file)), and a handler \
                that runs as root cannot get a docroute-handler@ unit, which runs as the handler's own user. \
                Set DocRouteUser to a dedicated user: create one (a sysusers.d line such as \
                'u \(suggested) - "\(bundle)" /nonexistent', then systemd-sysusers), name it in DocRouteUser, \
                and run docroutectl handlers --unit \(bundle) again
                """)
        }
        let container = handler.manifest.container ?? configuration.containersDirectory + "/" + bundle
        let unit = "docroute-handler@\(instance)"
        let dropIn = "/etc/systemd/system/\(unit).service.d/docroute.conf"
        var lines = [
            "# \(unit): \(bundle), started by systemd as user \(instance) when documents wait for it.",
            "# Run as root: docroutectl handlers --unit \(bundle) | sh",
            "set -e",
        ]
        if let flags = configuration.launchFlagDirectory, flags != Self.unitFlagDirectory {
            lines.append("# Note: \(configuration.file) has launch_flag_directory = \(flags), but docroute-handler@.path watches \(Self.unitFlagDirectory).")
        } else if configuration.launchFlagDirectory == nil {
            lines.append("# Note: \(configuration.file) sets no launch_flag_directory; add launch_flag_directory = \"\(Self.unitFlagDirectory)\" so docrouted asks systemd.")
        }
        lines += [
            "install -d -m 0755 /etc/docroute/handlers /etc/systemd/system/\(unit).service.d",
            "cat > /etc/docroute/handlers/\(instance).env <<'EOF'",
            "HANDLER_BUNDLE_ID=\(bundle)",
            "EOF",
            "cat > \(dropIn) <<'EOF'",
            "[Service]",
            "Environment=\(Self.quoted("DOCROUTE_SOCKET=" + configuration.socket)) \(Self.quoted("DOCROUTE_BUNDLE_IDENTIFIER=" + bundle))",
            "# The handler's own command (DocRouteLaunchCommand), instead of docroutectl subscribe --exec.",
            "ExecStart=",
            "ExecStart=\(command.map(Self.quoted).joined(separator: " "))",
            "# Writable: its own container only; the template hides the others.",
            "BindPaths=\(Self.quoted(container))",
            "EOF",
            "systemctl daemon-reload",
            "systemctl enable --now \(unit).path",
        ]
        return lines.joined(separator: "\n")
    }

    /// Root, by name or uid.
    static func isRoot(_ user: HandlerUser) -> Bool {
        switch user {
        case .uid(let uid): uid == 0
        case .name(let name): name == "root"
        }
    }

    /// The user as an administrator reads it: `root (uid 0)` rather than `'0'`.
    static func shown(_ user: HandlerUser) -> String {
        switch user {
        case .uid(0): "root (uid 0)"
        case .uid(let uid): "uid \(uid)"
        case .name(let name): "'\(name)'"
        }
    }

    /// One word of a systemd command line or setting: double-quoted, with `\`, `"`, `$` and `%`
    /// escaped so systemd passes it on as written.
    static func quoted(_ word: String) -> String {
        var text = ""
        for character in word {
            switch character {
            case "\\": text += "\\\\"
            case "\"": text += "\\\""
            case "$": text += "$$"
            case "%": text += "%%"
            case "\n": text += "\\n"
            default: text.append(character)
            }
        }
        return "\"" + text + "\""
    }
}
