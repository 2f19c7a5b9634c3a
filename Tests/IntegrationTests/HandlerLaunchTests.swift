import DocRouteTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Handlers docrouted starts itself never get its identity or capabilities (a handler is code docrouted
/// does not trust): the real daemon, the real launch, and the handler's own /proc/self/status.
@Suite(.serialized)
struct HandlerLaunchTests {
    /// An unused uid and gid for a daemon that is not root.
    static let daemonUID: UInt32 = 64_321
    static let statusLines = ["Uid:", "Gid:", "Groups:", "CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:", "NoNewPrivs:"]

    /// A handler claiming `.<ext>` files that, when launched, copies the identity lines of its own
    /// /proc/self/status to `report`.
    static func installProbe(in harness: DaemonHarness, bundle: String, ext: String, user: String, report: String) throws {
        let script = #"grep -E '^(Uid|Gid|Groups|Cap[A-Za-z]+|NoNewPrivs):' /proc/self/status > "$0.tmp" && mv "$0.tmp" "$0""#
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
            <key>CFBundleIdentifier</key><string>\(bundle)</string>
            <key>CFBundleDocumentTypes</key>
            <array><dict>
            <key>CFBundleTypeName</key><string>Probe</string>
            <key>LSHandlerRank</key><string>Owner</string>
            <key>LSItemContentTypes</key><array><string>\(bundle).file</string></array>
            </dict></array>
            <key>UTExportedTypeDeclarations</key>
            <array><dict>
            <key>UTTypeIdentifier</key><string>\(bundle).file</string>
            <key>UTTypeConformsTo</key><array><string>public.data</string></array>
            <key>UTTypeTagSpecification</key><dict><key>public.filename-extension</key><string>\(ext)</string></dict>
            </dict></array>
            <key>DocRouteUser</key><string>\(user)</string>
            <key>DocRouteLaunchCommand</key>
            <array><string>/bin/sh</string><string>-c</string><string>\(script.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;"))</string><string>\(report)</string></array>
            </dict>
            </plist>
            """
        try plist.write(toFile: harness.handlers + "/\(ext).plist", atomically: true, encoding: .utf8)
    }

    /// `name: value` lines of a status report, the value's white space collapsed.
    static func fields(_ report: String) -> [String: String] {
        var fields: [String: String] = [:]
        for line in report.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[String(line[...colon])] = line[line.index(after: colon)...].split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
        }
        return fields
    }

    static func status(of pid: pid_t) -> [String: String] {
        fields((try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? "")
    }

    /// A folder anyone may write, for a handler running as another user.
    static func sharedFolder(in harness: DaemonHarness) throws -> String {
        chmod(harness.root, 0o755)
        let folder = harness.root + "/reports"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        chmod(folder, 0o1777)
        return folder
    }

    /// The status reply's entry for `bundle`.
    static func handlerStatus(_ harness: DaemonHarness, _ bundle: String) throws -> [String: Any]? {
        let client = try LineClient(path: harness.socket)
        defer { client.close() }
        try client.send(["type": "status", "id": "s"])
        let reply = try #require(client.readMessage())
        let handlers = reply["handlers"] as? [[String: Any]] ?? []
        return handlers.first { ($0["bundleIdentifier"] as? String)?.lowercased() == bundle.lowercased() }
    }

    /// docroute.service's situation: docrouted runs as an unprivileged user with CAP_CHOWN and
    /// CAP_FOWNER in its ambient set. The handler it starts (its own user's) has none of them.
    @Test(.enabled(if: getuid() == 0, "setpriv must be root to start docrouted as another uid with capabilities"))
    func aDaemonWithAmbientCapabilitiesLaunchesHandlersWithNone() throws {
        let harness = try DaemonHarness(sampleHandlers: false)
        defer { harness.stop(); harness.remove() }
        let report = harness.root + "/caps.report"
        try Self.installProbe(in: harness, bundle: "org.docroute.test.capprobe", ext: "capprobe", user: String(Self.daemonUID), report: report)
        try harness.start(runAs: (Self.daemonUID, Self.daemonUID), ambientCapabilities: ["chown", "fowner"])
        let daemon = try #require(harness.process?.processIdentifier)
        // The daemon itself holds them: otherwise this test would prove nothing.
        let own = Self.status(of: daemon)
        #expect(own["CapAmb:"] == "0000000000000009" && own["CapEff:"] == "0000000000000009", "docrouted's own sets: \(own)")
        #expect(own["Uid:"] == "\(Self.daemonUID) \(Self.daemonUID) \(Self.daemonUID) \(Self.daemonUID)")

        try harness.drop("sample.capprobe", Array("probe\n".utf8))
        #expect(harness.waitFor(report, timeout: 20), "the probe handler was not launched:\n\(harness.daemonLog.suffix(3000))")
        let text = try String(contentsOfFile: report, encoding: .utf8)
        let fields = Self.fields(text)
        for set in ["CapInh:", "CapPrm:", "CapEff:", "CapAmb:"] {
            #expect(fields[set] == "0000000000000000", "the launched handler's \(set) is \(fields[set] ?? "missing"):\n\(text)")
        }
        #expect(fields["Uid:"] == "\(Self.daemonUID) \(Self.daemonUID) \(Self.daemonUID) \(Self.daemonUID)", "\(text)")
        #expect(fields["NoNewPrivs:"] == "1", "a launched handler can gain nothing through setuid programs:\n\(text)")
    }

    /// A daemon that is not root starts only handlers of its own user: another user's is refused
    /// with a log line and the handler's lastError, and nothing runs.
    @Test(.enabled(if: getuid() == 0, "setpriv must be root to start docrouted as another uid"))
    func aDaemonThatIsNotRootRefusesHandlersOfAnotherUser() throws {
        let harness = try DaemonHarness(sampleHandlers: false)
        defer { harness.stop(); harness.remove() }
        let report = harness.root + "/root.report"
        let bundle = "org.docroute.test.rootprobe"
        try Self.installProbe(in: harness, bundle: bundle, ext: "rootprobe", user: "root", report: report)
        try harness.start(runAs: (Self.daemonUID, Self.daemonUID), ambientCapabilities: ["chown", "fowner"])
        try harness.drop("sample.rootprobe", Array("probe\n".utf8))
        #expect(harness.waitUntil(timeout: 20) { harness.daemonLog.contains("launch-other-user") }, "no refusal logged:\n\(harness.daemonLog.suffix(3000))")
        let line = harness.daemonLog.split(separator: "\n").first { $0.contains("launch-other-user") }.map(String.init) ?? ""
        #expect(line.contains("uid \(Self.daemonUID)") && line.contains("docroutectl handlers --unit \(bundle)"), "the log line says why and what to do: \(line)")
        let entry = try Self.handlerStatus(harness, bundle)
        let lastError = entry?["lastError"] as? String ?? ""
        #expect(lastError.contains("launch-other-user"), "status lastError: \(String(describing: entry))")
        #expect(!FileManager.default.fileExists(atPath: report), "the refused handler ran anyway")
    }

    /// A root docrouted starts the command as the handler's user, with that user's groups, and with
    /// every capability set empty, the bounding set included.
    @Test(.enabled(if: getuid() == 0 && getpwnam("nobody") != nil, "needs root and the user nobody"))
    func aRootDaemonLaunchesHandlersAsTheirUserWithNoCapabilities() throws {
        let harness = try DaemonHarness(sampleHandlers: false)
        defer { harness.stop(); harness.remove() }
        let report = try Self.sharedFolder(in: harness) + "/nobody.report"
        try Self.installProbe(in: harness, bundle: "org.docroute.test.nobodyprobe", ext: "nobodyprobe", user: "nobody", report: report)
        try harness.start()
        try harness.drop("sample.nobodyprobe", Array("probe\n".utf8))
        #expect(harness.waitFor(report, timeout: 20), "the probe handler was not launched:\n\(harness.daemonLog.suffix(3000))")
        let text = try String(contentsOfFile: report, encoding: .utf8)
        let fields = Self.fields(text)
        let nobody = try #require(getpwnam("nobody")).pointee
        #expect(fields["Uid:"] == Array(repeating: "\(nobody.pw_uid)", count: 4).joined(separator: " "), "\(text)")
        #expect(fields["Gid:"] == Array(repeating: "\(nobody.pw_gid)", count: 4).joined(separator: " "), "\(text)")
        for set in ["CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:"] {
            #expect(fields[set] == "0000000000000000", "the launched handler's \(set) is \(fields[set] ?? "missing"):\n\(text)")
        }
    }

    /// With launch_flag_directory (the shipped configuration under systemd) docrouted starts
    /// nothing: it writes the flag file of the handler's user, which its path unit watches. A
    /// handler that would run as root has no unit instance and is refused.
    @Test func underSystemdTheDaemonWritesTheHandlersFlagInsteadOfStartingIt() throws {
        let flags = "launch-flags"
        let harness = try DaemonHarness(extraConfig: "launch_flag_directory = \"/tmp/placeholder\"", sampleHandlers: false)
        defer { harness.stop(); harness.remove() }
        // The configuration names a folder inside the temporary root, made by the daemon on demand.
        let config = try String(contentsOfFile: harness.configPath, encoding: .utf8)
            .replacingOccurrences(of: "/tmp/placeholder", with: harness.root + "/" + flags)
        try config.write(toFile: harness.configPath, atomically: true, encoding: .utf8)
        let report = try Self.sharedFolder(in: harness) + "/flag.report"
        let rootReport = harness.root + "/reports/root.report"
        try Self.installProbe(in: harness, bundle: "org.docroute.test.flagprobe", ext: "flagprobe", user: "nobody", report: report)
        try Self.installProbe(in: harness, bundle: "org.docroute.test.rootflagprobe", ext: "rootflagprobe", user: "root", report: rootReport)
        try harness.start()
        try harness.drop("sample.flagprobe", Array("probe\n".utf8))
        let flag = harness.root + "/" + flags + "/nobody"
        #expect(harness.waitFor(flag, timeout: 20), "no flag file for docroute-handler@nobody:\n\(harness.daemonLog.suffix(3000))")
        #expect((try? String(contentsOfFile: flag, encoding: .utf8)) == "org.docroute.test.flagprobe\n")
        #expect(harness.daemonLog.contains("docroute-handler@nobody.service"), "\(harness.daemonLog.suffix(2000))")

        try harness.drop("sample.rootflagprobe", Array("probe\n".utf8))
        #expect(harness.waitUntil(timeout: 20) { harness.daemonLog.contains("launch-no-unit-instance") }, "\(harness.daemonLog.suffix(3000))")
        // Neither ran: systemd, not docrouted, starts handlers here.
        #expect(!FileManager.default.fileExists(atPath: report) && !FileManager.default.fileExists(atPath: rootReport))
        #expect(!FileManager.default.fileExists(atPath: harness.root + "/" + flags + "/root"))
    }

    /// `docroutectl handlers --unit ID` prints the set-up an admin pipes to sh: the environment
    /// file, a drop-in with the handler's command and its container, the path unit enabled.
    @Test func docroutectlPrintsTheUnitLinesForAHandler() throws {
        // A user this host has: a DocRouteUser naming none fails the manifest.
        let harness = try DaemonHarness(sampleHandlers: false)
        defer { harness.remove() }
        try Self.installProbe(in: harness, bundle: "org.docroute.test.unitprobe", ext: "unitprobe", user: "nobody", report: "/tmp/100% \"x\"")
        try Self.installProbe(in: harness, bundle: "org.docroute.test.rootunitprobe", ext: "rootunitprobe", user: "root", report: "/tmp/r")
        let (status, output) = try Self.docroutectl(["handlers", "--config", harness.configPath, "--unit", "org.docroute.test.unitprobe"])
        #expect(status == 0, "\(output)")
        let lines = output.split(separator: "\n").map(String.init)
        #expect(lines.contains("HANDLER_BUNDLE_ID=org.docroute.test.unitprobe"), "\(output)")
        #expect(lines.contains("cat > /etc/systemd/system/docroute-handler@nobody.service.d/docroute.conf <<'EOF'"), "\(output)")
        #expect(lines.contains(#"BindPaths="\#(harness.containers)/org.docroute.test.unitprobe""#), "\(output)")
        #expect(lines.contains { $0.hasPrefix(#"ExecStart="/bin/sh" "-c" "grep -E"#) && $0.hasSuffix(#" "/tmp/100%% \"x\"""#) }, "\(output)")
        #expect(lines.contains("systemctl enable --now docroute-handler@nobody.path"), "\(output)")

        let (rootStatus, rootOutput) = try Self.docroutectl(["handlers", "--config", harness.configPath, "--unit", "org.docroute.test.rootunitprobe"])
        #expect(rootStatus == 1 && rootOutput.contains("a handler that runs as root cannot get a docroute-handler@ unit"), "\(rootStatus): \(rootOutput)")
    }

    static func docroutectl(_ arguments: [String]) throws -> (Int32, String) {
        try DaemonHarness.run(DaemonHarness.binDirectory + "/docroutectl", arguments)
    }
}
