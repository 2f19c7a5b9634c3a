import DocRouteTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The operator's side: docroutectl finds the daemon's configuration, `docrouted
/// --check` checks what the daemon will use, admin defaults take effect, quarantine is managed.
@Suite(.serialized) struct OperatorSetupIntegrationTests {
    static let molecules = "com.sunsetlakesoftware.molecules"
    static let textviewer = "org.docroute.textviewer"

    /// A configuration beside the harness's, with `handlers_directory` replaced.
    func configuration(_ harness: DaemonHarness, handlers: String, name: String) throws -> String {
        let text = try String(contentsOfFile: harness.configPath, encoding: .utf8)
            .replacingOccurrences(of: "handlers_directory = \"\(harness.handlers)\"", with: "handlers_directory = \"\(handlers)\"")
        let path = harness.root + "/" + name
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    // Item 4: every command takes --config (then $DOCROUTE_CONFIG) and reads the handlers folder
    // and the socket from it; a missing folder or socket is named, with what to do.
    @Test func commandsReadTheHandlersAndTheSocketFromTheConfiguration() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }

        let handlers = try CtlProcess.run(["handlers", "--config", harness.configPath])
        #expect(handlers.status == 0, "\(handlers.error)")
        #expect(handlers.output.contains(Self.molecules) && handlers.output.contains("[\(harness.handlers)/"), "\(handlers.output)")

        let routed = try CtlProcess.run(["route", "/tmp/1abc.pdb"], environment: ["DOCROUTE_CONFIG": harness.configPath])
        #expect(routed.status == 0, "\(routed.error)")
        #expect(routed.output.contains("→ \(Self.molecules)"), "\(routed.output)")

        // Several inputs, as `type` takes them (item 10).
        let several = try CtlProcess.run(["route", "--json", "/tmp/1abc.pdb", "todolist://www.acme.com"] + ["--config", harness.configPath])
        let routes = (try? JSONSerialization.jsonObject(with: Data(several.output.utf8))) as? [[String: Any]]
        #expect(routes?.map { $0["bundleIdentifier"] as? String } == [Self.molecules, "com.acme.todolist"], "\(several.output)\(several.error)")

        let nowhere = harness.root + "/no-such.toml"
        let missingFile = try CtlProcess.run(["handlers"], environment: ["DOCROUTE_CONFIG": nowhere])
        #expect(missingFile.status == 1)
        #expect(missingFile.error.contains(nowhere) && missingFile.error.contains("$DOCROUTE_CONFIG") && missingFile.error.contains("does not exist"),
                "\(missingFile.error)")

        // A handlers folder that is not there is an error, not "no handlers".
        let gone = harness.root + "/gone.d"
        let elsewhere = try configuration(harness, handlers: gone, name: "elsewhere.toml")
        for command in [["handlers"], ["route", "/tmp/1abc.pdb"], ["default", "set", "public.plain-text", Self.textviewer]] {
            let run = try CtlProcess.run(command + ["--config", elsewhere])
            #expect(run.status == 1, "\(command): \(run.output)")
            #expect(run.error.contains("the handlers folder \(gone)") && run.error.contains("does not exist") && run.error.contains(elsewhere),
                    "\(command): \(run.error)")
            #expect(run.output.isEmpty, "\(command): \(run.output)")
        }

        // No daemon yet: the socket from the configuration is named, with what to do.
        let down = try CtlProcess.run(["status", "--config", harness.configPath])
        #expect(down.status == 1)
        #expect(down.error.contains("its socket \(harness.socket)") && down.error.contains("does not exist")
                && down.error.contains("Is docrouted running?"), "\(down.error)")
        #expect(!down.error.contains("connect(descriptor"), "\(down.error)")

        // A socket file nobody listens on (a daemon killed without cleaning up).
        let stale = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in Array(harness.socket.utf8).enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(stale, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        close(stale)
        #expect(bound == 0)
        let refused = try CtlProcess.run(["status"], environment: ["DOCROUTE_CONFIG": harness.configPath])
        #expect(refused.status == 1)
        #expect(refused.error.contains(harness.socket) && refused.error.contains("docrouted is not running"), "\(refused.error)")
        unlink(harness.socket)

        try harness.start()
        let up = try CtlProcess.run(["status", "--config", harness.configPath])
        #expect(up.status == 0, "\(up.error)")
        #expect(up.output.contains(harness.socket) && up.output.contains(Self.molecules), "\(up.output)")
    }

    // Item 4 (make run): the configuration is kept once the user has edited it, and the second
    // terminal's export lines are printed.
    @Test func makeRunKeepsAnEditedConfigurationAndPrintsTheExportLines() throws {
        let temporary = try TemporaryFolder("run")
        defer { temporary.remove() }
        let root = temporary.string
        let script = DaemonHarness.repositoryRoot + "/scripts/make-run-config.sh"
        func run() throws -> String {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: script)
            process.arguments = [root]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
            return output
        }
        let first = try run()
        #expect(first.contains("export DOCROUTE_CONFIG=\(root)/docroute.toml"), "\(first)")
        let config = root + "/docroute.toml"
        let written = try String(contentsOfFile: config, encoding: .utf8)
        #expect(written.contains("socket = \"\(root)/run/docroute.sock\""), "\(written)")
        try ("max_queued_files = 2048\n" + written).write(toFile: config, atomically: true, encoding: .utf8)

        let second = try run()
        #expect(second.contains("kept"), "\(second)")
        #expect(try String(contentsOfFile: config, encoding: .utf8).contains("max_queued_files = 2048"))
        let handlers = try CtlProcess.run(["handlers"], environment: ["DOCROUTE_CONFIG": config])
        #expect(handlers.status == 0 && handlers.output.contains(Self.molecules), "\(handlers.error)\(handlers.output)")
    }

    // Item 3: --check fails on a broken plist, a duplicate bundle identifier, a handlers folder
    // that does not exist and an inbox that is not a folder; it names the MIME database and socket.
    @Test func checkReportsEverythingThatWouldStopDelivery() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        let good = try DaemonHarness.check(config: harness.configPath)
        #expect(good.status == 0, "\(good.output)")
        #expect(good.output.contains("ready to deliver"), "\(good.output)")
        #expect(good.output.split(separator: "\n").contains { $0.hasPrefix("ok") && $0.contains("mime") && ($0.contains("/mime") || $0.contains("built-in")) },
                "\(good.output)")
        #expect(good.output.split(separator: "\n").contains { $0.contains("socket") && $0.contains(harness.socket) }, "\(good.output)")
        #expect(good.output.split(separator: "\n").contains { $0.hasPrefix("ok") && $0.contains("inbox") && $0.contains(harness.inbox) && $0.contains("writable") },
                "\(good.output)")

        try "<plist><dict><key>CFBundleName</key></dict>".write(toFile: harness.handlers + "/broken.plist", atomically: true, encoding: .utf8)
        try FileManager.default.copyItem(atPath: harness.handlers + "/molecules.plist", toPath: harness.handlers + "/molecules-copy.plist")
        let bad = try DaemonHarness.check(config: harness.configPath)
        #expect(bad.status == 1, "\(bad.output)")
        let failed = bad.output.split(separator: "\n").filter { $0.hasPrefix("FAILED") }
        #expect(failed.contains { $0.contains("broken.plist") }, "\(bad.output)")
        #expect(failed.contains { $0.contains("molecules-copy.plist") && $0.contains(Self.molecules) }, "\(bad.output)")
        #expect(bad.output.contains("would stop delivery"), "\(bad.output)")

        let gone = harness.root + "/gone.d"
        let elsewhere = try configuration(harness, handlers: gone, name: "elsewhere.toml")
        try Data().write(to: URL(fileURLWithPath: harness.root + "/file-inbox"))
        try (try String(contentsOfFile: elsewhere, encoding: .utf8) + "\n[[inbox]]\npath = \"\(harness.root)/file-inbox\"\n")
            .write(toFile: elsewhere, atomically: true, encoding: .utf8)
        let missing = try DaemonHarness.check(config: elsewhere)
        #expect(missing.status == 1, "\(missing.output)")
        #expect(missing.output.split(separator: "\n").contains { $0.hasPrefix("FAILED") && $0.contains(gone) && $0.contains("does not exist") }, "\(missing.output)")
        #expect(missing.output.split(separator: "\n").contains { $0.hasPrefix("FAILED") && $0.contains("file-inbox") && $0.contains("not a folder") }, "\(missing.output)")
    }

    // Item 2: `default set` takes effect in the running daemon without SIGHUP, and says when.
    // Item 8: a default for a type nobody claims and the catalog does not know is refused.
    // Item 10: adding one manifest reloads once.
    @Test func defaultsTakeEffectWithoutASignal() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        let pdbType = "com.sunsetlakesoftware.molecules.pdb"
        let config = ["--config", harness.configPath]

        let offline = try CtlProcess.run(["default", "set", pdbType, Self.textviewer] + config)
        #expect(offline.status == 0, "\(offline.error)")
        #expect(offline.output.contains("docrouted is not running"), "\(offline.output)")
        #expect(try CtlProcess.run(["default", "unset", pdbType] + config).status == 0)

        try harness.start()
        try harness.drop("1abc.pdb", DeliveryIntegrationTests.pdb)
        #expect(harness.waitFor(harness.sandbox(Self.molecules) + "/1abc.pdb"), "\(harness.daemonLog)")

        let set = try CtlProcess.run(["default", "set", pdbType, Self.textviewer] + config)
        #expect(set.status == 0, "\(set.error)")
        #expect(set.output.contains("type \(pdbType) → \(Self.textviewer)"), "\(set.output)")
        #expect(set.output.contains("has taken the change"), "\(set.output)")
        try harness.drop("2abc.pdb", DeliveryIntegrationTests.pdb)
        #expect(harness.waitFor(harness.sandbox(Self.textviewer) + "/2abc.pdb"), "\(harness.daemonLog)")
        #expect(!FileManager.default.fileExists(atPath: harness.sandbox(Self.molecules) + "/2abc.pdb"))
        #expect(!harness.daemonLog.contains("SIGHUP"))

        let unset = try CtlProcess.run(["default", "unset", pdbType] + config)
        #expect(unset.status == 0 && unset.output.contains("has taken the change"), "\(unset.output)\(unset.error)")
        try harness.drop("3abc.pdb", DeliveryIntegrationTests.pdb)
        #expect(harness.waitFor(harness.sandbox(Self.molecules) + "/3abc.pdb"), "\(harness.daemonLog)")

        // The .reason file's kind of type: nobody claims it, the catalog does not know it.
        let dynamic = "dyn.ah62d4rv4ge81e5pe"
        let refused = try CtlProcess.run(["default", "set", dynamic, Self.textviewer] + config)
        #expect(refused.status == 1)
        #expect(refused.error.contains("no handler claims \(dynamic)") && refused.error.contains("--force"), "\(refused.error)")
        let scheme = try CtlProcess.run(["default", "set", "nosuchscheme:", Self.textviewer] + config)
        #expect(scheme.status == 1 && scheme.error.contains("no handler claims the URL scheme nosuchscheme"), "\(scheme.error)")
        let forced = try CtlProcess.run(["default", "set", "--force", dynamic, Self.textviewer] + config)
        #expect(forced.status == 0 && forced.output.contains("has taken the change"), "\(forced.output)\(forced.error)")

        // One manifest copied in (created, written, closed): one reload.
        let reloads = { harness.daemonLog.components(separatedBy: "handlers and defaults reloaded").count - 1 }
        let before = reloads()
        try FileManager.default.copyItem(atPath: DaemonHarness.repositoryRoot + "/config/handlers/todolist.plist",
                                         toPath: harness.handlers + "/todolist-2.plist")
        #expect(harness.waitUntil(timeout: 5) { reloads() > before }, "\(harness.daemonLog)")
        usleep(800_000)
        #expect(reloads() == before + 1, "\(harness.daemonLog)")
    }

    // Item 8: quarantine list shows each file with its reason, age, mailbox and inbox; release
    // puts it back through intake once a handler claims it; the .reason advice is right; status
    // says where the quarantine is.
    @Test func quarantinedFilesAreListedAndReleasedOnceAHandlerClaimsThem() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        let config = ["--config", harness.configPath]
        let bytes: [UInt8] = [0x00, 0x9F, 0x92, 0x96, 0xFF, 0x00, 0x01, 0x02] + Array(repeating: 0xEE, count: 56)
        try harness.drop("blob.qqq", bytes)
        try harness.drop("work.qqq", bytes, mailbox: "Work")
        let blob = harness.quarantine + "/Inbox/blob.qqq"
        let work = harness.quarantine + "/Work/work.qqq"
        #expect(harness.waitFor(blob + ".reason") && harness.waitFor(work + ".reason"), "\(harness.daemonLog)")

        let reason = try String(contentsOfFile: blob + ".reason", encoding: .utf8)
        #expect(reason.hasPrefix("no handler claims "), "\(reason)")
        #expect(reason.contains("install a handler") && reason.contains("docroutectl quarantine release"), "\(reason)")
        #expect(!reason.contains("set a default"), "\(reason)")
        #expect(reason.contains("\nfrom \(harness.inbox)/blob.qqq\n"), "\(reason)")
        // Logged once, not twice.
        let told = harness.daemonLog.split(separator: "\n").filter {
            $0.contains("/blob.qqq") && ($0.contains(" notice ") || $0.contains(" warning ") || $0.contains(" error "))
        }
        #expect(told.count == 1, "\(told)")
        // The message comes before the metadata (item 10).
        let line = String(told.first ?? "")
        let message = line.range(of: "quarantined: no handler claims"), metadata = line.range(of: "mailbox=Inbox")
        #expect(message != nil && metadata != nil && message!.lowerBound < metadata!.lowerBound, "\(line)")

        let listed = try CtlProcess.run(["quarantine", "list"] + config)
        #expect(listed.status == 0, "\(listed.error)")
        let row = listed.output.split(separator: "\n").first { $0.hasPrefix(work) }
        #expect(row?.contains(" Work ") == true && row?.contains(harness.inbox) == true && row?.contains("no handler claims") == true, "\(listed.output)")
        let json = try CtlProcess.run(["quarantine", "list", "--json"] + config)
        let entries = try #require((try? JSONSerialization.jsonObject(with: Data(json.output.utf8))) as? [[String: Any]], "\(json.output)")
        #expect(entries.count == 2)
        let entry = try #require(entries.first { $0["path"] as? String == blob })
        #expect(entry["mailbox"] as? String == "Inbox")
        #expect(entry["inbox"] as? String == harness.inbox)
        #expect((entry["ageSeconds"] as? Int).map { $0 >= 0 && $0 < 60 } == true, "\(entry)")
        #expect((entry["reason"] as? String)?.hasPrefix("no handler claims") == true)

        let status = try CtlProcess.run(["status"] + config)
        #expect(status.output.contains("quarantine: \(harness.quarantine)"), "\(status.output)")

        // Nobody claims them yet: both stay.
        let early = try CtlProcess.run(["quarantine", "release", "--all"] + config)
        #expect(early.status == 1)
        #expect(early.error.contains("kept \(blob)") && early.error.contains("still no handler claims"), "\(early.error)")
        #expect(FileManager.default.fileExists(atPath: blob) && FileManager.default.fileExists(atPath: blob + ".reason"))

        let anything = "org.example.anything"
        try """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
            <key>CFBundleIdentifier</key><string>\(anything)</string>
            <key>CFBundleDocumentTypes</key><array><dict>
            <key>LSItemContentTypes</key><array><string>public.data</string></array>
            <key>LSHandlerRank</key><string>Alternate</string>
            </dict></array>
            </dict></plist>
            """.write(toFile: harness.handlers + "/anything.plist", atomically: true, encoding: .utf8)
        #expect(harness.waitUntil(timeout: 10) {
            (try? CtlProcess.run(["status", "--json"] + config).output.contains(anything)) == true
        })

        let one = try CtlProcess.run(["quarantine", "release", blob] + config)
        #expect(one.status == 0, "\(one.error)")
        #expect(one.output.contains("released \(blob) → \(harness.inbox)/blob.qqq (for \(anything))"), "\(one.output)")
        let delivered = harness.sandbox(anything) + "/blob.qqq"
        #expect(harness.waitFor(delivered), "\(harness.daemonLog)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: delivered)) == Data(bytes))
        #expect(!FileManager.default.fileExists(atPath: blob) && !FileManager.default.fileExists(atPath: blob + ".reason"))

        let rest = try CtlProcess.run(["quarantine", "release", "--all"] + config)
        #expect(rest.status == 0, "\(rest.error)")
        #expect(harness.waitFor(harness.sandbox(anything, mailbox: "Work") + "/work.qqq"), "\(harness.daemonLog)")
        let empty = try CtlProcess.run(["quarantine", "list"] + config)
        #expect(empty.output.hasPrefix("nothing in quarantine"), "\(empty.output)")
    }

    /// Runs docrouted as uid and gid 65534 (nobody) with `HOME=/root`, as a unit without User=
    /// state would, until it is ready or exits; returns its exit status (nil while it runs) and log.
    func startAsNobody(_ config: String, log: String, until ready: Bool) throws -> (status: Int32?, log: String, process: Process) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", "--",
                             DaemonHarness.binDirectory + "/docrouted", "--config", config, "--log-level", "info"]
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = "/root"
        environment["XDG_DATA_HOME"] = nil
        process.environment = environment
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        let deadline = Date().addingTimeInterval(20)
        while process.isRunning, Date() < deadline {
            if ready, (try? String(contentsOfFile: log, encoding: .utf8))?.contains("docrouted ready") == true { break }
            usleep(20_000)
        }
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        return (process.isRunning ? nil : process.terminationStatus, text, process)
    }

    // Item 7: started as a user who may not create its folders, docrouted says which folder, as
    // which user, and what to do; no Foundation error text.
    // Item 6: a missing inbox is created and logged; an inbox it cannot write is refused loudly;
    // the MIME database used, and why, is logged.
    @Test(.enabled(if: getuid() == 0, "needs root to run docrouted as uid 65534 with setpriv"))
    func startedAsAnotherUserItSaysWhatIsWrongInWords() throws {
        let temporary = try TemporaryFolder("nobody")
        defer { temporary.remove() }
        let root = temporary.string
        chmod(root, 0o755)
        for folder in ["locked", "run", "handlers.d", "drop", "state"] {
            try FileManager.default.createDirectory(atPath: root + "/" + folder, withIntermediateDirectories: true)
        }
        chmod(root + "/locked", 0o755)  // root's: nobody may not create in it
        for folder in ["run", "drop", "state"] { chown(root + "/" + folder, 65534, 65534) }
        func write(state: String, socket: String = root + "/run/s.sock") throws -> String {
            let path = root + "/docroute-\(UUID().uuidString).toml"
            try """
                socket = "\(socket)"
                state_directory = "\(state)"
                handlers_directory = "\(root)/handlers.d"

                [[inbox]]
                path = "\(root)/drop"

                [[inbox]]
                path = "\(root)/run/new-inbox"

                [[inbox]]
                path = "\(root)/locked"
                """.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }

        let refused = try startAsNobody(try write(state: root + "/locked/state"), log: root + "/refused.log", until: false)
        #expect(refused.status != nil && refused.status != 0, "\(refused.log)")
        #expect(refused.log.contains("cannot create the state_directory \(root)/locked/state: Permission denied (docrouted runs as uid 65534)"),
                "\(refused.log)")
        #expect(refused.log.contains("docrouted --check"), "\(refused.log)")
        #expect(!refused.log.contains("NSCocoaErrorDomain") && !refused.log.contains("Code=513"), "\(refused.log)")

        let unbound = try startAsNobody(try write(state: root + "/state", socket: root + "/locked/s.sock"), log: root + "/unbound.log", until: false)
        #expect(unbound.status != nil && unbound.status != 0, "\(unbound.log)")
        #expect(unbound.log.contains("cannot listen on the socket \(root)/locked/s.sock: Permission denied (docrouted runs as uid 65534)"), "\(unbound.log)")
        #expect(!unbound.log.contains("bind(descriptor"), "\(unbound.log)")
        // That run got as far as the inboxes: the next one must find this one missing again.
        rmdir(root + "/run/new-inbox")

        let started = try startAsNobody(try write(state: root + "/state"), log: root + "/started.log", until: true)
        defer {
            started.process.terminate()
            started.process.waitUntilExit()
        }
        #expect(started.status == nil, "\(started.log)")
        #expect(started.log.contains("inbox did not exist; created it") && started.log.contains("\(root)/run/new-inbox"), "\(started.log)")
        let loud = started.log.split(separator: "\n").first { $0.contains("inbox is not writable") }
        #expect(loud?.contains("critical") == true && loud?.contains("\(root)/locked") == true, "\(started.log)")
        // HOME=/root cannot be read by nobody: the system database is used without it, and said so.
        let mime = started.log.split(separator: "\n").first { $0.contains("MIME database:") }
        #expect(mime?.contains("without the user's directory") == true && mime?.contains("warning") == true, "\(started.log)")
    }

    // Item 10: "delivered since start" counts what `open` delivered, as "delivered today" does.
    @Test func deliveredSinceStartCountsOpenedDocuments() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        let file = harness.root + "/opened.pdb"
        try Data(DeliveryIntegrationTests.pdb).write(to: URL(fileURLWithPath: file))
        let opened = try CtlProcess.run(["open", "--socket", harness.socket, file])
        #expect(opened.status == 0, "\(opened.error)")
        let url = try CtlProcess.run(["open", "--socket", harness.socket, "todolist://www.acme.com"])
        #expect(url.status == 0, "\(url.error)")
        let status = try CtlProcess.run(["status", "--json", "--socket", harness.socket])
        let report = try #require((try? JSONSerialization.jsonObject(with: Data(status.output.utf8))) as? [String: Any], "\(status.output)")
        #expect(report["deliveredSinceStart"] as? Int == 2, "\(report)")
        #expect(report["deliveredToday"] as? Int == 2, "\(report)")
    }

    // Item 6: a folder inside a mailbox folder (cp -r myfolder drop/) does not wait forever: its
    // files go to that mailbox, whether it was there at start or copied in while running.
    @Test func filesInAFolderInsideAMailboxAreDeliveredToThatMailbox() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        let early = harness.inbox + "/Early/sub/deeper"
        try FileManager.default.createDirectory(atPath: early, withIntermediateDirectories: true)
        try Data(DeliveryIntegrationTests.pdb).write(to: URL(fileURLWithPath: early + "/1abc.pdb"))
        try harness.start()
        #expect(harness.waitFor(harness.sandbox(Self.molecules, mailbox: "Early") + "/1abc.pdb"), "\(harness.daemonLog)")

        // As cp -r does it: the folders, then each file written in place.
        let copied = harness.inbox + "/myfolder/sub"
        try FileManager.default.createDirectory(atPath: copied, withIntermediateDirectories: true)
        usleep(100_000)
        try Data(DeliveryIntegrationTests.pdb).write(to: URL(fileURLWithPath: copied + "/2abc.pdb"))
        #expect(harness.waitFor(harness.sandbox(Self.molecules, mailbox: "myfolder") + "/2abc.pdb"), "\(harness.daemonLog)")
        #expect(harness.waitUntil { !FileManager.default.fileExists(atPath: copied + "/2abc.pdb") })
        #expect(harness.daemonLog.contains("folder inside a mailbox folder: its files go to mailbox myfolder"), "\(harness.daemonLog)")
        let status = try CtlProcess.run(["status", "--json", "--socket", harness.socket])
        let report = (try? JSONSerialization.jsonObject(with: Data(status.output.utf8))) as? [String: Any]
        let inbox = (report?["inboxes"] as? [[String: Any]])?.first
        #expect(inbox?["waiting"] as? Int == 0, "\(status.output)")
    }

    // Item 5: progress counts each file once, from seen to settled: during a burst larger than
    // max_queued_files (so the inbox is listed again and again), the total never exceeds the
    // files dropped, done never exceeds the total nor what was delivered, and all arrive.
    @Test func progressFiguresMatchABurstOfKnownSize() throws {
        let harness = try DaemonHarness(extraConfig: "max_queued_files = 300")
        defer { harness.remove() }
        let stopped = 1500, running = 2500
        for index in 0..<stopped { try Data("stopped \(index)\n".utf8).write(to: URL(fileURLWithPath: harness.inbox + "/s\(index).txt")) }
        try harness.start()
        let client = try LineClient(path: harness.socket)
        defer { client.close() }
        let dropper = Thread {
            for index in 0..<running { _ = try? harness.drop("r\(index).txt", Array("running \(index)\n".utf8)) }
        }
        dropper.start()
        var samples: [(phase: String, done: Int, total: Int, delivered: Int)] = []
        var delivered = 0
        let deadline = Date().addingTimeInterval(120)
        while delivered < stopped + running, Date() < deadline {
            try client.send(["type": "status", "id": "p"])
            guard let reply = client.readMessage() else { break }
            delivered = reply["deliveredSinceStart"] as? Int ?? 0
            if let progress = reply["progress"] as? [String: Any] {
                samples.append((progress["phase"] as? String ?? "?", progress["done"] as? Int ?? -1, progress["total"] as? Int ?? -1, delivered))
            }
            usleep(20_000)
        }
        #expect(delivered == stopped + running, "\(harness.daemonLog.suffix(2000))")
        #expect(!samples.isEmpty, "no progress was reported during a burst of \(stopped + running) files")
        for sample in samples {
            #expect(sample.total <= stopped + running, "counted more files than were dropped: \(sample)")
            #expect(sample.done >= 0 && sample.done <= sample.total, "\(sample)")
            // Settled files are delivered ones here (nothing is quarantined); one batch may be in between.
            #expect(sample.done <= sample.delivered + 256, "done ahead of what was delivered: \(sample)")
        }
    }

    // Item 7: a launch command that does not exist is named, with the manifest to fix, instead of
    // Foundation's Code=260 followed by "exited without subscribing".
    @Test func aMissingLaunchCommandIsNamedWithTheManifestToFix() throws {
        let harness = try DaemonHarness(launchCommands: true)
        defer { harness.remove() }
        let manifest = harness.handlers + "/molecules.plist"
        var text = try String(contentsOfFile: manifest, encoding: .utf8)
        let start = try #require(text.range(of: "<key>DocRouteLaunchCommand</key>"))
        let end = try #require(text.range(of: "</array>", range: start.upperBound..<text.endIndex))
        text.replaceSubrange(start.lowerBound..<end.upperBound, with: "<key>DocRouteLaunchCommand</key><array><string>/nonexistent/molecules-import</string></array>")
        try text.write(toFile: manifest, atomically: true, encoding: .utf8)
        try harness.start()
        try harness.drop("1abc.pdb", DeliveryIntegrationTests.pdb)
        #expect(harness.waitUntil(timeout: 10) { harness.daemonLog.contains("cannot launch the handler") }, "\(harness.daemonLog)")
        let log = harness.daemonLog
        #expect(log.contains("cannot launch the handler: /nonexistent/molecules-import does not exist; fix DocRouteLaunchCommand in \(manifest)"), "\(log)")
        #expect(!log.contains("NSCocoaErrorDomain") && !log.contains("exited without subscribing"), "\(log)")
        let status = try CtlProcess.run(["status", "--json", "--socket", harness.socket])
        #expect(status.output.contains("/nonexistent/molecules-import does not exist"), "\(status.output)")
    }
}
