import DocRouteHandlers
import DocRoutePlatform
import Foundation
import Logging
import SystemPackage

/// What `docrouted --check` looks at before the daemon would use it: the handlers (each failed
/// manifest), the inboxes and the folders docrouted writes (there and writable, or creatable),
/// the MIME database and the socket path. Each finding says what to do; a ``Finding/Severity/fatal``
/// one would stop delivery.
package struct ConfigurationCheck: Sendable {
    package struct Finding: Sendable, CustomStringConvertible {
        package enum Severity: String, Sendable {
            /// In place.
            case ok
            /// Worth knowing; nothing to do (a folder docrouted will create).
            case note
            /// Delivery goes on, some of it differently than meant.
            case warning
            /// Would stop delivery, for some files or all.
            case fatal = "FAILED"
        }

        package var severity: Severity
        /// What was checked: "handlers", "inbox", "socket", …
        package var subject: String
        package var message: String

        package init(severity: Severity, subject: String, message: String) {
            self.severity = severity
            self.subject = subject
            self.message = message
        }

        package var description: String {
            "\(severity.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)) \(subject.padding(toLength: 12, withPad: " ", startingAt: 0)) \(message)"
        }
    }

    package let configuration: DaemonConfiguration

    package init(configuration: DaemonConfiguration) {
        self.configuration = configuration
    }

    /// Every finding, in the order the daemon uses things.
    package func run(mime: MIMEDatabaseChoice, socketPassedBySystemd: Bool = false) -> [Finding] {
        var findings = handlers()
        if configuration.inboxes.isEmpty {
            findings.append(Finding(severity: .warning, subject: "inbox", message: """
                no inboxes configured: nothing will be delivered except `open` requests; add an [[inbox]] table \
                to \(configuration.file) for a folder to watch
                """))
        }
        for inbox in configuration.inboxes {
            findings.append(Self.folder(inbox.path, role: "inbox", what: "\(inbox.kind.rawValue) inbox"))
        }
        findings.append(Self.folder(configuration.stateDirectory, role: "state", what: "state_directory (ledger, defaults)"))
        findings.append(Self.folder(configuration.containersDirectory, role: "containers", what: "containers_directory"))
        findings.append(Self.folder(configuration.quarantineDirectory, role: "quarantine", what: "quarantine_directory"))
        if let textfile = configuration.metricsTextfile {
            var finding = Self.folder((textfile as NSString).deletingLastPathComponent, role: "metrics", what: "metrics_textfile's folder")
            if finding.severity == .fatal || finding.severity == .note {
                // Metrics never stop delivery, and docrouted does not create their folder.
                finding.severity = .warning
                finding.message += "; no metrics are written until it is"
            }
            findings.append(finding)
        }
        findings.append(Finding(severity: mime.isDegraded ? .warning : .ok, subject: "mime", message: mime.explanation))
        findings.append(socket(passedBySystemd: socketPassedBySystemd))
        if let restart = restartFinding() { findings.append(restart) }
        return findings
    }

    /// The handlers folder and each manifest: a failed one is a handler that gets nothing.
    func handlers() -> [Finding] {
        let path = configuration.handlersDirectory
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            return [Finding(severity: .fatal, subject: "handlers", message: """
                \(path) (handlers_directory) does not exist: no handler is registered and every file would be \
                quarantined; create it and put handler Info.plists in it, or fix handlers_directory in \(configuration.file)
                """)]
        }
        do throws(Errno) {
            try FilePath(path).checkAccess([.read, .execute])
        } catch {
            return [Finding(severity: .fatal, subject: "handlers", message: "\(path) cannot be read by uid \(ProcessIdentity.realUserID): \(error); make it readable by docrouted's user")]
        }
        // As the daemon would load them now: of two manifests with one identifier, the one it
        // loaded last keeps serving (its record in the state directory), and a DocRouteUser this
        // host has no user of fails.
        let registry = HandlerDirectory(path: path).load(
            logger: .init(label: "docrouted.check", factory: { _ in SwiftLogNoOpLogHandler() }),
            previouslyLoaded: LoadedHandlersStore(stateDirectory: configuration.stateDirectory).load(),
            userExists: { UserDatabase.user(named: $0) != nil })
        var findings: [Finding] = []
        if registry.handlers.isEmpty {
            findings.append(Finding(severity: registry.failures.isEmpty ? .warning : .ok, subject: "handlers",
                                    message: "\(path): no handler loaded; every file would be quarantined until one is installed"))
        } else {
            findings.append(Finding(severity: .ok, subject: "handlers", message: "\(path): \(registry.handlers.count) loaded (\(registry.handlers.map(\.bundleIdentifier).joined(separator: ", ")))"))
        }
        for failure in registry.failures {
            // A copy refused while the manifest it copies keeps serving stops nothing.
            let keeps = failure.error.code == .duplicateIdentifier && failure.bundleIdentifier.flatMap(registry.handler(for:)) != nil
            findings.append(Finding(severity: keeps ? .warning : .fatal, subject: "handler", message: "\(failure.error.description)"))
        }
        // Each was read otherwise than written (a misspelled key, a skipped claim, a type
        // declaration's problem), or the handler is never sent anything.
        for warning in registry.warnings {
            findings.append(Finding(severity: .warning, subject: "handler", message: "\(warning)"))
        }
        return findings
    }

    /// A folder docrouted reads and writes: there and writable, or creatable (its nearest existing
    /// parent writable), by the user this check runs as.
    package static func folder(_ path: String, role: String, what: String) -> Finding {
        let user = "uid \(ProcessIdentity.realUserID)"
        // A path that cannot be looked at (a parent not searchable) counts as missing: the nearest
        // parent that exists is then checked, and its finding says what to fix.
        if let info = try? FilePath(path).status(followingSymbolicLinks: true) {
            guard info.isDirectory else {
                return Finding(severity: .fatal, subject: role, message: "\(path) (\(what)) is not a folder; remove what is there or change the path")
            }
            do throws(Errno) {
                try FilePath(path).checkAccess([.write, .execute])
            } catch {
                return Finding(severity: .fatal, subject: role, message: "\(path) (\(what)) is not writable by \(user): \(error); chown it to docrouted's user or run docrouted as its owner")
            }
            return Finding(severity: .ok, subject: role, message: "\(path) (\(what)) exists, writable by \(user)")
        }
        var parent = (path as NSString).deletingLastPathComponent
        while !parent.isEmpty, parent != "/", !FileManager.default.fileExists(atPath: parent) {
            parent = (parent as NSString).deletingLastPathComponent
        }
        if parent.isEmpty { parent = "/" }
        guard FilePath(parent).isAccessible([.write, .execute]) else {
            return Finding(severity: .fatal, subject: role, message: "\(path) (\(what)) does not exist and cannot be created: \(parent) is not writable by \(user); create it (systemd-tmpfiles --create docroute.conf) and give it to docrouted's user")
        }
        return Finding(severity: .note, subject: role, message: "\(path) (\(what)) does not exist; docrouted will create it")
    }

    func socket(passedBySystemd: Bool) -> Finding {
        let path = configuration.socket
        if passedBySystemd {
            return Finding(severity: .ok, subject: "socket", message: "passed by systemd (docroute.socket); \(path) is not bound by docrouted")
        }
        guard path.utf8.count <= 107 else {
            return Finding(severity: .fatal, subject: "socket", message: "\(path) is \(path.utf8.count) bytes, longer than a Unix socket path may be (107); choose a shorter socket")
        }
        // As for a folder: what cannot be looked at counts as missing, and its folder is checked.
        if let info = try? FilePath(path).status(followingSymbolicLinks: false) {
            guard info.fileType == .socket else {
                return Finding(severity: .fatal, subject: "socket", message: "\(path) exists and is not a socket; remove it or choose another socket")
            }
            if UnixSocketFile.acceptsConnections(at: path) {
                return Finding(severity: .note, subject: "socket", message: "\(path): a docrouted already listens on it (this check leaves it alone); a second one would fail to start")
            }
            return Finding(severity: .ok, subject: "socket", message: "\(path): a stale socket file, replaced at start")
        }
        var finding = Self.folder((path as NSString).deletingLastPathComponent, role: "socket", what: "the socket's folder")
        finding.message = "\(path): " + finding.message
        return finding
    }
}
