import DocRouteTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What a new administrator meets first, from a fresh clone through the README: `make run`'s
/// output and what it installs, --version, the help and the errors of a first configuration.
@Suite(.serialized) struct AdministratorFirstRunIntegrationTests {
    static let textviewer = "org.docroute.textviewer"

    /// Runs a program to its end; what it printed on each stream.
    static func run(_ executable: String, _ arguments: [String], directory: String? = nil, environment: [String: String] = [:])
        throws -> (status: Int32, output: String, error: String)
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        var env = ProcessInfo.processInfo.environment
        env["DOCROUTE_CONFIG"] = nil
        env["DOCROUTE_SOCKET"] = nil
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Both pipes drained at once, so neither fills while the other is read.
        final class Box: @unchecked Sendable { var data = Data() }
        let errorText = Box()
        let drained = DispatchGroup()
        drained.enter()
        Thread {
            errorText.data = error.fileHandleForReading.readDataToEndOfFile()
            drained.leave()
        }.start()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        drained.wait()
        return (process.terminationStatus, String(decoding: outputData, as: UTF8.self), String(decoding: errorText.data, as: UTF8.self))
    }

    static var docrouted: String { DaemonHarness.binDirectory + "/docrouted" }
    static var docroutectl: String { DaemonHarness.binDirectory + "/docroutectl" }

    /// The newest version in debian/changelog: what the package is.
    static func changelogVersion() throws -> String {
        let text = try String(contentsOfFile: DaemonHarness.repositoryRoot + "/debian/changelog", encoding: .utf8)
        let first = try #require(text.split(separator: "\n").first)
        let open = try #require(first.firstIndex(of: "(")), close = try #require(first.firstIndex(of: ")"))
        return String(first[first.index(after: open)..<close])
    }

    // MARK: make run

    /// `make run` installs what building and running needs, not what only the package and the
    /// container test do.
    @Test func makeRunInstallsOnlyWhatRunningNeeds() throws {
        let dryRun = try Self.run("/usr/bin/make", ["-n", "run"], directory: DaemonHarness.repositoryRoot)
        #expect(dryRun.status == 0, "\(dryRun.error)")
        // A recipe's continued lines are printed as written: one line each once joined.
        let commands = dryRun.output.replacingOccurrences(of: "\\\n", with: " ")
        let installs = commands.split(separator: "\n").filter { $0.contains("dpkg-query") }
        try #require(installs.count == 1, "\(dryRun.output)")
        let listed = try #require(installs[0].range(of: "for p in ").map { installs[0][$0.upperBound...] })
        let packages = Set(listed.prefix { $0 != ";" }.split(separator: " ").map(String.init))
        for needed in ["libsystemd-dev", "libsqlite3-dev", "pkg-config", "shared-mime-info"] {
            #expect(packages.contains(needed), "\(packages)")
        }
        for packagingOnly in ["debootstrap", "lintian", "systemd-container", "debhelper", "dpkg-dev"] {
            #expect(!packages.contains(packagingOnly), "make run would install \(packagingOnly): \(packages)")
        }
        // The tests still install everything, the man-page check's groff included.
        let test = try Self.run("/usr/bin/make", ["-n", "test"], directory: DaemonHarness.repositoryRoot)
        let testInstall = test.output.replacingOccurrences(of: "\\\n", with: " ").split(separator: "\n").first { $0.contains("dpkg-query") } ?? ""
        for package in ["debootstrap", "lintian", "libsystemd-dev", "groff-base"] {
            #expect(testInstall.contains(" \(package) ") || testInstall.contains(" \(package);"), "make test: \(testInstall)")
        }
    }

    /// The two export lines for the second terminal come last, after the handler list, so they
    /// are on the screen when docrouted starts.
    @Test func makeRunPrintsTheExportLinesLast() throws {
        let temporary = try TemporaryFolder("run")
        defer { temporary.remove() }
        let printed = try Self.run(DaemonHarness.repositoryRoot + "/scripts/make-run-config.sh", [temporary.string],
                                   environment: ["BIN_DIR": DaemonHarness.binDirectory])
        #expect(printed.status == 0, "\(printed.error)")
        let lines = printed.output.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
        try #require(lines.count > 10, "\(printed.output)")
        #expect(lines[lines.count - 2] == "  export DOCROUTE_CONFIG=\(temporary.string)/docroute.toml", "\(printed.output)")
        #expect(lines[lines.count - 1].hasPrefix("  export PATH=\"") && lines[lines.count - 1].contains(DaemonHarness.binDirectory), "\(printed.output)")
        let handlers = try #require(lines.firstIndex(of: "handlers:"), "\(printed.output)")
        #expect(lines[handlers...].contains { $0.contains(Self.textviewer) }, "\(printed.output)")
        let starting = try #require(lines.firstIndex { $0.hasPrefix("starting docrouted in the foreground") }, "\(printed.output)")
        #expect(handlers < starting && starting < lines.count - 2, "\(printed.output)")
    }

    /// A missing admin_group is said once at start, not again at each reload that finds it still
    /// missing (every `default set` and `default unset` is one).
    @Test func aMissingAdminGroupIsSaidOncePerStart() throws {
        let harness = try DaemonHarness(extraConfig: "admin_group = \"docroute-no-such-group\"")
        defer { harness.remove() }
        try harness.start()
        let environment = ["DOCROUTE_CONFIG": harness.configPath]
        for arguments in [["default", "set", "public.plain-text", Self.textviewer], ["default", "unset", "public.plain-text"],
                          ["default", "set", "public.plain-text", Self.textviewer]] {
            let done = try CtlProcess.run(arguments, environment: environment)
            #expect(done.status == 0, "\(arguments): \(done.error)")
        }
        #expect(harness.waitUntil { harness.daemonLog.components(separatedBy: "handlers and defaults reloaded").count - 1 >= 3 }, "\(harness.daemonLog)")
        let warnings = harness.daemonLog.components(separatedBy: "admin_group 'docroute-no-such-group' does not exist").count - 1
        #expect(warnings == 1, "\(harness.daemonLog)")
    }

    // MARK: --version, help

    /// Both programs say their version, the one of the Debian package; `welcome` names the same.
    @Test func bothProgramsSayTheirVersion() throws {
        let version = try Self.changelogVersion()
        for (program, name) in [(Self.docrouted, "docrouted"), (Self.docroutectl, "docroutectl")] {
            let said = try Self.run(program, ["--version"])
            #expect(said.status == 0, "\(said.error)")
            #expect(said.output == "\(name) \(version)\n", "\(said.output)")
        }
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        let client = try LineClient(path: harness.socket)
        defer { client.close() }
        try client.send(["type": "hello", "protocol": 1, "id": "1"])
        #expect(client.readMessage()?["daemon"] as? String == "docrouted/\(version)")
    }

    /// Every command and argument of docroutectl has a description, and no help text keeps a
    /// line-continuation backslash of the source.
    @Test func everyCommandAndArgumentIsDescribed() throws {
        let dump = try Self.run(Self.docroutectl, ["--experimental-dump-help"])
        #expect(dump.status == 0, "\(dump.error)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(dump.output.utf8)) as? [String: Any])
        var problems: [String] = []
        func visit(_ command: [String: Any], path: String) {
            let abstract = command["abstract"] as? String ?? ""
            let discussion = command["discussion"] as? String ?? ""
            if abstract.isEmpty { problems.append("\(path): no abstract") }
            for text in [abstract, discussion] where text.split(separator: "\n").contains(where: { $0.hasSuffix("\\") }) {
                problems.append("\(path): a line ends with a backslash: \(text.prefix(80))")
            }
            for argument in command["arguments"] as? [[String: Any]] ?? [] {
                let names = (argument["names"] as? [[String: Any]])?.compactMap { $0["name"] as? String } ?? []
                let name = names.first ?? (argument["valueName"] as? String ?? "?")
                guard name != "help", name != "version", (argument["shouldDisplay"] as? Bool) != false else { continue }
                if (argument["abstract"] as? String ?? "").isEmpty { problems.append("\(path) \(name): no description") }
            }
            for sub in command["subcommands"] as? [[String: Any]] ?? [] {
                let name = sub["commandName"] as? String ?? "?"
                guard name != "help" else { continue }
                visit(sub, path: path + " " + name)
            }
        }
        visit(try #require(root["command"] as? [String: Any]), path: "docroutectl")
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    /// A root handler cannot have a docroute-handler@ unit: said with what to do, exit 1, no usage.
    @Test func aRootHandlersUnitSaysWhatToDo() throws {
        let harness = try DaemonHarness(launchCommands: true)
        defer { harness.remove() }
        // The sample molecules handler: DocRouteUser root, with a launch command.
        let bundle = "com.sunsetlakesoftware.molecules"
        let unit = try CtlProcess.run(["handlers", "--unit", bundle, "--config", harness.configPath])
        #expect(unit.status == 1, "\(unit.error)")
        #expect(unit.output.isEmpty, "\(unit.output)")
        #expect(unit.error.contains("a handler that runs as root cannot get a docroute-handler@ unit, which runs as the handler's own user")
                && unit.error.contains("Set DocRouteUser to a dedicated user"), "\(unit.error)")
        #expect(!unit.error.contains("USAGE:") && !unit.error.contains("runs as '0'"), "\(unit.error)")
    }

    // MARK: A first configuration's mistakes

    @Test func anUnterminatedStringIsSaidWithItsLine() throws {
        let temporary = try TemporaryFolder("toml")
        defer { temporary.remove() }
        let path = temporary.string + "/docroute.toml"
        try "max_connections = 32\nsocket = \"/run/docroute/docroute.sock\nmax_file_size = 1000\n".write(toFile: path, atomically: true, encoding: .utf8)
        let check = try Self.run(Self.docrouted, ["--check", "--config", path])
        #expect(check.status == 2, "\(check.output)\(check.error)")
        #expect(check.error.contains("\(path):2: unterminated string: the line ends before the closing quote (\")"), "\(check.error)")
        #expect(!check.error.contains("control characters"), "\(check.error)")
    }

    @Test func noInboxIsAWarningNotReadyToDeliverAlone() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        let text = try String(contentsOfFile: harness.configPath, encoding: .utf8)
        let withoutInbox = try #require(text.components(separatedBy: "[[inbox]]").first)
        let path = harness.root + "/no-inbox.toml"
        try withoutInbox.write(toFile: path, atomically: true, encoding: .utf8)
        let check = try Self.run(Self.docrouted, ["--check", "--config", path])
        #expect(check.status == 0, "\(check.output)\(check.error)")
        #expect(check.output.contains("no inboxes configured: nothing will be delivered except `open` requests"), "\(check.output)")
        #expect(check.output.contains("ready to deliver (") && check.output.contains("warning"), "\(check.output)")
    }

    @Test func aTruncatedManifestNamesTheLineWhereItEnds() throws {
        let harness = try DaemonHarness(sampleHandlers: false)
        defer { harness.remove() }
        let whole = try Data(contentsOf: URL(fileURLWithPath: DaemonHarness.repositoryRoot + "/config/handlers/molecules.plist"))
        try whole.prefix(400).write(to: URL(fileURLWithPath: harness.handlers + "/molecules.plist"))
        let listed = try CtlProcess.run(["handlers", "--config", harness.configPath])
        #expect(listed.status == 1)
        let said = listed.output + listed.error
        #expect(said.contains("molecules.plist:14: not a property list") && said.contains("the file ends on line 14") && said.contains("truncated"), "\(said)")
        #expect(!said.contains("correct format"), "\(said)")
    }
}
