import DocRouteTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The built `docroutectl` (subscribe, open, status) against a real docrouted.
@Suite(.serialized) struct CtlIntegrationTests {
    static let molecules = "com.sunsetlakesoftware.molecules"
    static let textviewer = "org.docroute.textviewer"
    static let todolist = "com.acme.todolist"
    static let todoURL = "todolist://www.acme.com?Quarterly%20Report#200806231300"
    static let pdb = DeliveryIntegrationTests.pdb
    static let text = Array("a line of plain text\n".utf8)
    static let plainLaunch = #"{"type":"launch","launchOptions":{}}"#

    static func json(_ line: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
    }

    static func launchURL(_ message: [String: Any]?) -> String? {
        (message?["launchOptions"] as? [String: Any])?["UIApplicationLaunchOptionsURLKey"] as? String
    }

    /// A raw subscription, to see what the daemon still owes after docroutectl is gone.
    func rawSubscribe(_ harness: DaemonHarness, _ bundle: String) throws -> (LineClient, [String: Any], String?) {
        let client = try LineClient(path: harness.socket)
        try client.send(["type": "subscribe", "id": "1", "bundleIdentifier": bundle])
        let reply = try #require(client.readMessage())
        return (client, reply, client.readLineText())
    }

    /// A handler script that logs its arguments as `[a][b]` lines and declines names holding "reject".
    func writeScript(_ harness: DaemonHarness) throws -> (script: String, log: String) {
        let script = harness.root + "/handler.sh"
        let log = harness.root + "/handler.log"
        try """
            #!/bin/sh
            printf '[%s]' "$@" >> '\(log)'
            printf '\\n' >> '\(log)'
            echo "script got $DOCROUTE_EVENT $DOCROUTE_DELIVERY_ID"
            case "$*" in *reject*) exit 1 ;; esac
            exit 0
            """.write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        return (script, log)
    }

    @Test func subscribePrintsLaunchThenOpenURLLinesAndAcknowledges() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        let sandbox = harness.sandbox(Self.textviewer)
        try harness.drop("a.txt", Self.text)
        #expect(harness.waitFor(sandbox + "/a.txt"), "\(harness.daemonLog)")
        try harness.drop("b.txt", Self.text)
        #expect(harness.waitFor(sandbox + "/b.txt"))

        let ctl = try CtlProcess(["subscribe", Self.textviewer, "--socket", harness.socket, "--count", "3"])
        defer { ctl.stop() }
        #expect(ctl.waitForLines(2).count == 2, "stderr: \(ctl.standardError)")
        try harness.drop("c.txt", Self.text)
        let status = ctl.waitForExit()
        #expect(status == 0, "stderr: \(ctl.standardError)")
        let lines = ctl.lines
        try #require(lines.count == 3, "\(lines)")

        // The protocol's own lines: launch with the oldest waiting document, then openURL.
        #expect(lines[0].hasPrefix(#"{"type":"launch","deliveryID":""#), "\(lines[0])")
        let launch = Self.json(lines[0])
        #expect(Self.launchURL(launch) == "file://" + sandbox + "/a.txt")
        #expect(launch?["contentType"] as? String == "public.plain-text")
        #expect(launch?["mailbox"] as? String == "Inbox")
        for (line, name) in zip(lines.dropFirst(), ["b.txt", "c.txt"]) {
            #expect(line.hasPrefix(#"{"type":"openURL","deliveryID":""#), "\(line)")
            let message = Self.json(line)
            #expect(message?["url"] as? String == "file://" + sandbox + "/" + name)
            #expect(message?["isFileURL"] as? Bool == true)
            #expect((message?["annotation"] as? [String: Any])?["originalFilename"] as? String == name)
        }
        #expect(ctl.standardError.contains("subscribed as \(Self.textviewer)"), "\(ctl.standardError)")
        #expect(ctl.standardError.contains("2 documents waiting"), "\(ctl.standardError)")
        #expect(ctl.standardError.contains("handled:true"))

        // All three were acknowledged: nothing is owed, and a new subscription is a plain launch.
        let (client, subscribed, next) = try rawSubscribe(harness, Self.textviewer)
        defer { client.close() }
        #expect(subscribed["pending"] as? Int == 0, "\(subscribed)")
        #expect(next == Self.plainLaunch)
    }

    @Test func aPlainLaunchIsPrintedButNeitherAcknowledgedNorCounted() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        let ctl = try CtlProcess(["subscribe", Self.todolist, "--socket", harness.socket, "--count", "1", "--json"])
        defer { ctl.stop() }
        #expect(ctl.waitForLines(1) == [Self.plainLaunch], "stderr: \(ctl.standardError)")
        usleep(300_000)
        #expect(ctl.isRunning, "a plain launch does not count: \(ctl.standardError)")

        let open = try CtlProcess.run(["open", "--socket", harness.socket, Self.todoURL])
        #expect(open.status == 0, "\(open.error)")
        #expect(ctl.waitForExit() == 0, "stderr: \(ctl.standardError)")
        let lines = ctl.lines
        try #require(lines.count == 2, "\(lines)")
        let openURL = Self.json(lines[1])
        #expect(openURL?["type"] as? String == "openURL")
        #expect(openURL?["url"] as? String == Self.todoURL)
        #expect(openURL?["isFileURL"] as? Bool == false)
        #expect(ctl.standardError.isEmpty, "--json leaves standard error quiet: \(ctl.standardError)")
    }

    @Test func execAcknowledgesWithTheCommandsExitStatus() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        let (script, log) = try writeScript(harness)
        let sandbox = harness.sandbox(Self.molecules)
        // One word after --exec: split like a shell, as a systemd unit passes ${HANDLER_COMMAND}.
        let ctl = try CtlProcess([
            "subscribe", Self.molecules, "--socket", harness.socket, "--count", "2", "--exec", "/bin/sh '\(script)' --flag",
        ])
        defer { ctl.stop() }
        #expect(ctl.waitForLines(1) == [Self.plainLaunch], "stderr: \(ctl.standardError)")
        try harness.drop("good.pdb", Self.pdb)
        #expect(ctl.waitForLines(2).count == 2, "stderr: \(ctl.standardError)")
        try harness.drop("reject me.pdb", Self.pdb)
        #expect(ctl.waitForExit() == 0, "stderr: \(ctl.standardError)")
        let lines = ctl.lines
        try #require(lines.count == 3, "\(lines)")
        #expect(Self.json(lines[2])?["url"] as? String == "file://" + sandbox + "/reject%20me.pdb")

        // The script got the decoded local paths, after the words of the command.
        let logged = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(logged == "[--flag][\(sandbox)/good.pdb]\n[--flag][\(sandbox)/reject me.pdb]\n", "\(logged)")
        #expect(ctl.standardError.contains("script got openURL"), "the script's output goes to stderr: \(ctl.standardError)")
        #expect(ctl.standardError.contains("exited with status 1"), "\(ctl.standardError)")
        #expect(!ctl.lines.contains { $0.contains("script got") }, "stdout is only JSON lines")

        // Both were acknowledged, one handled and one declined: neither comes again.
        let status = try CtlProcess.run(["status", "--socket", harness.socket, "--json"])
        let report = try #require(Self.json(status.output), "\(status.output) \(status.error)")
        let handlers = report["handlers"] as? [[String: Any]] ?? []
        let entry = handlers.first { $0["bundleIdentifier"] as? String == Self.molecules }
        #expect(entry?["pending"] as? Int == 0, "\(report)")
        let ledger = (report["ledger"] as? [String: Any])?[Self.molecules] as? [String: Any]
        #expect(ledger?["acknowledged"] as? Int == 1, "\(report)")
        #expect(ledger?["declined"] as? Int == 1, "\(report)")
        let (client, subscribed, next) = try rawSubscribe(harness, Self.molecules)
        defer { client.close() }
        #expect(subscribed["pending"] as? Int == 0)
        #expect(next == Self.plainLaunch, "the declined document is not redelivered")
    }

    @Test func execTakesTheRestOfTheCommandLineAndAURLAsItsLastArgument() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        let (script, log) = try writeScript(harness)
        let opened = try CtlProcess.run(["open", "--socket", harness.socket, Self.todoURL])
        #expect(opened.status == 0, "\(opened.error)")
        // Several words after --exec, one of them looking like an option of docroutectl.
        let ctl = try CtlProcess([
            "subscribe", Self.todolist, "--socket", harness.socket, "--count", "1", "--exec", "/bin/sh", script, "--count", "two words",
        ])
        defer { ctl.stop() }
        #expect(ctl.waitForExit() == 0, "stderr: \(ctl.standardError)")
        #expect(Self.launchURL(Self.json(ctl.lines.first ?? "")) == Self.todoURL, "\(ctl.lines)")
        let logged = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(logged == "[--count][two words][\(Self.todoURL)]\n", "\(logged)")
        #expect(ctl.standardError.contains("script got launch"), "\(ctl.standardError)")

        // A command that does not exist is refused before subscribing, so nothing is declined.
        let missing = try CtlProcess.run(["subscribe", Self.todolist, "--socket", harness.socket, "--exec", "/nonexistent/handler --x"])
        #expect(missing.status != 0)
        #expect(missing.error.contains("/nonexistent/handler"), "\(missing.error)")
    }

    @Test func openSendsAPathAsAFileURLAndAURLAsItIs() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        let shared = harness.root + "/shared folder"
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
        try Data(Self.text).write(to: URL(fileURLWithPath: shared + "/notes #1.txt"))

        // A relative path, resolved against the working directory and percent-encoded.
        let file = try CtlProcess.run(["open", "--socket", harness.socket, "--mailbox", "Shared", "--json", "./notes #1.txt"], directory: shared)
        #expect(file.status == 0, "\(file.error)")
        let opened = try #require(Self.json(file.output), "\(file.output)")
        #expect(opened["type"] as? String == "opened")
        #expect(opened["bundleIdentifier"] as? String == Self.textviewer)
        #expect(opened["contentType"] as? String == "public.plain-text")
        let copy = harness.sandbox(Self.textviewer, mailbox: "Shared") + "/notes #1.txt"
        #expect(FileManager.default.contents(atPath: copy) == Data(Self.text))
        #expect(FileManager.default.fileExists(atPath: shared + "/notes #1.txt"), "open leaves the original")

        let url = try CtlProcess.run(["open", "--socket", harness.socket, Self.todoURL])
        #expect(url.status == 0, "\(url.error)")
        #expect(url.output.contains("→ \(Self.todolist)"), "\(url.output)")
        #expect(url.output.contains("delivery"), "\(url.output)")
        let (client, _, launch) = try rawSubscribe(harness, Self.todolist)
        defer { client.close() }
        #expect(Self.launchURL(Self.json(launch ?? "")) == Self.todoURL, "\(launch ?? "nil")")

        let (textClient, subscribed, textLaunch) = try rawSubscribe(harness, Self.textviewer)
        defer { textClient.close() }
        #expect(subscribed["pending"] as? Int == 1)
        #expect(Self.launchURL(Self.json(textLaunch ?? "")) == "file://" + harness.sandbox(Self.textviewer, mailbox: "Shared") + "/notes%20%231.txt")

        let missing = try CtlProcess.run(["open", "--socket", harness.socket, harness.root + "/missing.pdb"])
        #expect(missing.status != 0)
        #expect(missing.error.contains("not-found") && missing.error.contains("missing.pdb"), "\(missing.error)")
        #expect(missing.output.isEmpty)
        let unclaimed = try CtlProcess.run(["open", "--socket", harness.socket, "nosuchscheme://x"])
        #expect(unclaimed.status != 0)
        #expect(unclaimed.error.contains("no-handler"), "\(unclaimed.error)")
    }

    @Test func theMoleculesManifestStartsDocroutectlAsItIs() throws {
        let harness = try DaemonHarness(launchCommands: true)
        defer { harness.remove() }
        // The launch command finds docroutectl on docrouted's PATH, as `make run` and the units arrange.
        try harness.start(environment: ["PATH": DaemonHarness.binDirectory + ":/usr/local/bin:/usr/bin:/bin"])
        // Nobody is subscribed as Molecules, so docrouted runs its DocRouteLaunchCommand:
        // `docroutectl subscribe com.sunsetlakesoftware.molecules --count 1` with DOCROUTE_SOCKET set.
        try harness.drop("1abc.pdb", Self.pdb)
        let acknowledged = harness.waitUntil(timeout: 20) {
            guard let status = try? CtlProcess.run(["status", "--socket", harness.socket, "--json"]),
                let report = Self.json(status.output),
                let ledger = (report["ledger"] as? [String: Any])?[Self.molecules] as? [String: Any]
            else { return false }
            return ledger["acknowledged"] as? Int == 1
        }
        #expect(acknowledged, "\(harness.daemonLog)")
        // The launched docroutectl writes to docrouted's output: its launch line carries the document.
        let launchLine = harness.daemonLog.split(separator: "\n").first { $0.hasPrefix(#"{"type":"launch","deliveryID""#) }
        #expect(Self.launchURL(Self.json(String(launchLine ?? ""))) == "file://" + harness.sandbox(Self.molecules) + "/1abc.pdb",
                "\(harness.daemonLog)")
        let (client, subscribed, next) = try rawSubscribe(harness, Self.molecules)
        defer { client.close() }
        #expect(subscribed["pending"] as? Int == 0)
        #expect(next == Self.plainLaunch)
    }

    @Test func statusListsHandlersInboxesAndFailedManifests() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try "<plist><dict><key>CFBundleName</key></dict>".write(toFile: harness.handlers + "/broken.plist", atomically: true, encoding: .utf8)
        try harness.start()
        let subscriber = try LineClient(path: harness.socket)
        defer { subscriber.close() }
        try subscriber.send(["type": "subscribe", "id": "1", "bundleIdentifier": Self.todolist])
        #expect(subscriber.readMessage()?["type"] as? String == "subscribed")

        // DOCROUTE_SOCKET is the default socket.
        let json = try CtlProcess.run(["status", "--json"], environment: ["DOCROUTE_SOCKET": harness.socket])
        #expect(json.status == 0, "\(json.error)")
        #expect(json.output.split(separator: "\n").count == 1, "one line: \(json.output)")
        let report = try #require(Self.json(json.output), "\(json.output)")
        #expect(report["type"] as? String == "status")
        let handlers = report["handlers"] as? [[String: Any]] ?? []
        #expect(Set(handlers.compactMap { $0["bundleIdentifier"] as? String })
                == [Self.molecules, Self.textviewer, Self.todolist, "org.docroute.pdfviewer", "org.docroute.archiver"])
        #expect(handlers.first { $0["bundleIdentifier"] as? String == Self.todolist }?["subscribed"] as? Bool == true)
        let inboxes = report["inboxes"] as? [[String: Any]] ?? []
        #expect(inboxes.first?["path"] as? String == harness.inbox)
        #expect((report["failedManifests"] as? [Any])?.count == 1, "\(report)")

        let human = try CtlProcess.run(["status", "--socket", harness.socket])
        #expect(human.status == 0, "\(human.error)")
        let rows = human.output.split(separator: "\n").map(String.init)
        #expect(rows.contains { $0.hasPrefix("HANDLER") && $0.contains("SUBSCRIBED") && $0.contains("PENDING") && $0.contains("IN FLIGHT") })
        let todo = rows.first { $0.hasPrefix(Self.todolist) }?.split(separator: " ").map(String.init)
        #expect(todo?.dropFirst().first == "yes", "\(human.output)")
        #expect(rows.first { $0.hasPrefix(Self.molecules) }?.split(separator: " ").dropFirst().first == "no")
        #expect(rows.contains { $0.hasPrefix(harness.inbox) && $0.contains("Inbox") }, "\(human.output)")
        #expect(rows.contains("failed manifests:"), "\(human.output)")
        #expect(rows.contains { $0.contains("broken.plist") }, "\(human.output)")
    }

    @Test func refusalsExitNonZeroWithTheReasonOnStandardError() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        let unknown = try CtlProcess.run(["subscribe", "com.example.nobody", "--socket", harness.socket])
        #expect(unknown.status == 78, "refused for good: EX_CONFIG")
        #expect(unknown.error.contains("unknown-handler") && unknown.error.contains("com.example.nobody"), "\(unknown.error)")
        #expect(unknown.output.isEmpty)

        let holder = try LineClient(path: harness.socket)
        defer { holder.close() }
        try holder.send(["type": "subscribe", "id": "1", "bundleIdentifier": Self.textviewer])
        #expect(holder.readMessage()?["type"] as? String == "subscribed")
        let twice = try CtlProcess.run(["subscribe", Self.textviewer, "--socket", harness.socket])
        #expect(twice.status == 1)
        #expect(twice.error.contains("already-subscribed"), "\(twice.error)")

        let nowhere = try CtlProcess.run(["subscribe", Self.textviewer, "--socket", harness.root + "/no.sock"])
        #expect(nowhere.status == 1)
        #expect(nowhere.error.contains("cannot connect") && nowhere.error.contains("no.sock"), "\(nowhere.error)")

        let badCount = try CtlProcess.run(["subscribe", Self.textviewer, "--socket", harness.socket, "--count", "0"])
        #expect(badCount.status != 0)
        #expect(badCount.error.contains("--count must be at least 1"), "\(badCount.error)")
    }

    @Test(.enabled(if: getuid() == 0, "needs root to run docroutectl as uid 65534 with setpriv"))
    func anotherUserIsNotPermitted() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        // mkdtemp made the root 0700; the socket itself is 0666.
        chmod(harness.root, 0o755)
        let secret = harness.root + "/secret.pdb"
        try Data(Self.pdb).write(to: URL(fileURLWithPath: secret))
        chmod(secret, 0o600)

        let subscribe = try CtlProcess.run(["subscribe", Self.molecules, "--socket", harness.socket], asNobody: true)
        #expect(subscribe.status == 78, "\(subscribe.error)")
        #expect(subscribe.error.contains("not-permitted") && subscribe.error.contains("65534"), "\(subscribe.error)")
        #expect(subscribe.output.isEmpty)

        let status = try CtlProcess.run(["status", "--socket", harness.socket], asNobody: true)
        #expect(status.status == 1)
        #expect(status.error.contains("not-permitted"), "\(status.error)")

        // docrouted never reads for a client what the client cannot read.
        let open = try CtlProcess.run(["open", "--socket", harness.socket, secret], asNobody: true)
        #expect(open.status == 1)
        #expect(open.error.contains("not-permitted"), "\(open.error)")
        #expect(!FileManager.default.fileExists(atPath: harness.sandbox(Self.molecules, mailbox: "Shared") + "/secret.pdb"))
    }
}

/// One run of the built docroutectl, its standard output read line by line as it comes.
final class CtlProcess: @unchecked Sendable {
    static var executable: String { DaemonHarness.binDirectory + "/docroutectl" }

    private let process = Process()
    private let lock = NSLock()
    private var output: [UInt8] = []
    private var errorOutput: [UInt8] = []
    private let drained = DispatchGroup()

    /// Starts `docroutectl ARGUMENTS`; with `asNobody`, through setpriv as uid and gid 65534.
    init(_ arguments: [String], environment: [String: String] = [:], directory: String? = nil, asNobody: Bool = false) throws {
        if asNobody {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", Self.executable] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: Self.executable)
            process.arguments = arguments
        }
        var env = ProcessInfo.processInfo.environment
        env["DOCROUTE_SOCKET"] = nil
        env["DOCROUTE_CONFIG"] = nil
        for (key, value) in environment { env[key] = value }
        process.environment = env
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let outputPipe = Pipe()
        let errorPipe = Pipe()
        process.standardOutput = outputPipe
        process.standardError = errorPipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        collect(outputPipe.fileHandleForReading, error: false)
        collect(errorPipe.fileHandleForReading, error: true)
    }

    /// Runs to the end (at most 30 s) and returns what it printed.
    static func run(_ arguments: [String], environment: [String: String] = [:], directory: String? = nil, asNobody: Bool = false)
        throws -> (status: Int32?, output: String, error: String)
    {
        let ctl = try CtlProcess(arguments, environment: environment, directory: directory, asNobody: asNobody)
        let status = ctl.waitForExit(timeout: 30)
        return (status, ctl.standardOutput, ctl.standardError)
    }

    private func collect(_ handle: FileHandle, error: Bool) {
        drained.enter()
        Thread { [self] in
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                lock.withLock {
                    if error { errorOutput.append(contentsOf: data) } else { output.append(contentsOf: data) }
                }
            }
            drained.leave()
        }.start()
    }

    var isRunning: Bool { process.isRunning }
    var standardOutput: String { lock.withLock { String(decoding: output, as: UTF8.self) } }
    var standardError: String { lock.withLock { String(decoding: errorOutput, as: UTF8.self) } }

    /// The complete lines printed so far.
    var lines: [String] {
        let text = standardOutput
        return text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    /// Waits until at least `count` lines were printed (or the time is up) and returns them all.
    func waitForLines(_ count: Int, timeout: TimeInterval = 20) -> [String] {
        let deadline = Date().addingTimeInterval(timeout)
        while lines.count < count, Date() < deadline, process.isRunning { usleep(10_000) }
        usleep(50_000)
        return lines
    }

    /// The exit status, or nil if it had to be killed after `timeout`.
    func waitForExit(timeout: TimeInterval = 20) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        guard !process.isRunning else {
            stop()
            return nil
        }
        _ = drained.wait(timeout: .now() + 5)
        return process.terminationStatus
    }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }
}
