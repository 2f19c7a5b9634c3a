import DocRouteClient
import DocRouteTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Open In… (candidates, open --with) and open by descriptor against the real
/// docrouted over its real sockets, with docroutectl and a Python standard-library client.
@Suite(.serialized) struct OpenInIntegrationTests {
    static let molecules = "com.sunsetlakesoftware.molecules"
    static let textviewer = "org.docroute.textviewer"
    static let pdb = DeliveryIntegrationTests.pdb
    static let isRoot = getuid() == 0
    /// The daemon's own unprivileged uid in the two-user tests; the client is nobody (65534).
    static let daemonUID: UInt32 = 48126

    static func json(_ line: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
    }

    static func bundles(_ object: [String: Any]?) -> [String] {
        ((object?["candidates"] as? [[String: Any]]) ?? []).compactMap { $0["bundleIdentifier"] as? String }
    }

    @Test func candidatesOverTheSocketAgreeWithTheOfflineRoute() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        let samples = DaemonHarness.repositoryRoot + "/config/samples"
        for input in [samples + "/1abc.pdb", samples + "/1abc.pdb.gz", samples + "/readme.txt", samples + "/notes.md",
                      "todolist://www.acme.com?Quarterly%20Report#200806231300"] {
            let route = try CtlProcess.run(["route", "--json", "--handlers", harness.handlers, input])
            let list = try CtlProcess.run(["open", "--list", "--json", "--socket", harness.socket, input])
            #expect(route.status == 0 && list.status == 0, "\(input): \(route.error) \(list.error)")
            let offline = try #require(Self.json(route.output), "\(route.output)")
            let live = try #require(Self.json(list.output), "\(list.output)")
            #expect(live["type"] as? String == "candidates")
            #expect(Self.bundles(live) == Self.bundles(offline), "\(input)")
            #expect(!Self.bundles(live).isEmpty, "\(input)")
            let liveEntries = live["candidates"] as? [[String: Any]] ?? []
            let offlineEntries = offline["candidates"] as? [[String: Any]] ?? []
            #expect(liveEntries.map { $0["matchedType"] as? String } == offlineEntries.map { $0["matchedType"] as? String }, "\(input)")
            #expect(liveEntries.map { $0["rank"] as? String } == offlineEntries.map { $0["rank"] as? String }, "\(input)")
            // Exactly one default, and it is route's winner.
            #expect(liveEntries.filter { $0["default"] as? Bool == true }.compactMap { $0["bundleIdentifier"] as? String }
                    == [offline["bundleIdentifier"] as? String].compactMap { $0 }, "\(input)")
            #expect(live["contentType"] as? String == offline["contentType"] as? String, "\(input)")
        }
        // Nothing was copied by listing.
        #expect((try? FileManager.default.contentsOfDirectory(atPath: harness.containers))?.isEmpty ?? true)

        // The text form names rank, role, the matched type and the default.
        let text = try CtlProcess.run(["open", "--list", "--socket", harness.socket, samples + "/1abc.pdb"])
        #expect(text.status == 0)
        #expect(text.output.contains("1. \(Self.molecules)") && text.output.contains("[default]"), "\(text.output)")
        #expect(text.output.contains(Self.textviewer) && text.output.contains("via com.sunsetlakesoftware.molecules.pdb"), "\(text.output)")
    }

    @Test func openWithSendsTheDocumentToThePickedCandidateOnly() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        let file = harness.root + "/1abc.pdb"
        try Data(Self.pdb).write(to: URL(fileURLWithPath: file))

        let picked = try CtlProcess.run(["open", "--with", Self.textviewer, "--socket", harness.socket, file])
        #expect(picked.status == 0, "\(picked.error)")
        #expect(picked.output.contains("→ \(Self.textviewer)"), "\(picked.output)")
        let copy = harness.sandbox(Self.textviewer, mailbox: "Shared") + "/1abc.pdb"
        #expect(FileManager.default.contents(atPath: copy) == Data(Self.pdb))
        #expect(!FileManager.default.fileExists(atPath: harness.sandbox(Self.molecules, mailbox: "Shared")))

        // The archiver claims gzip only: not a candidate, and the error lists those that are.
        let refused = try CtlProcess.run(["open", "--with", "org.docroute.archiver", "--socket", harness.socket, file])
        #expect(refused.status == 1)
        #expect(refused.error.contains("no-handler") && refused.error.contains("org.docroute.archiver is not among"), "\(refused.error)")
        #expect(refused.error.contains(Self.molecules) && refused.error.contains(Self.textviewer), "\(refused.error)")
        #expect(!FileManager.default.fileExists(atPath: harness.sandbox("org.docroute.archiver", mailbox: "Shared")))

        // A custom-scheme URL: the scheme's claimants are the candidates.
        let url = try CtlProcess.run(["open", "--list", "--json", "--socket", harness.socket, "todolist://x"])
        let reply = try #require(Self.json(url.output), "\(url.output) \(url.error)")
        #expect(reply["contentType"] == nil)
        #expect((reply["candidates"] as? [[String: Any]])?.first?["matchedType"] as? String == "todolist")
    }

    @Test(.enabled(if: isRoot, "needs root to run docrouted and the client as two other users with setpriv"))
    func anOrdinaryUserOpensAFileOnlyItCanReadAgainstADaemonOfAnotherUser() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start(runAs: (uid: Self.daemonUID, gid: Self.daemonUID))
        chmod(harness.root, 0o755)
        // A folder and a file only nobody may read: docrouted's own uid cannot open them by name.
        let privateFolder = harness.root + "/private"
        mkdir(privateFolder, 0o700)
        chown(privateFolder, 65534, 65534)
        let file = privateFolder + "/1abc.pdb"
        try Data(Self.pdb).write(to: URL(fileURLWithPath: file))
        chmod(file, 0o600)
        chown(file, 65534, 65534)

        let opened = try CtlProcess.run(["open", "--socket", harness.socket, file], asNobody: true)
        #expect(opened.status == 0, "\(opened.error)\n\(harness.daemonLog.suffix(1500))")
        #expect(opened.output.contains("→ \(Self.molecules)"), "\(opened.output)")
        let copy = harness.sandbox(Self.molecules, mailbox: "Shared") + "/1abc.pdb"
        #expect(FileManager.default.contents(atPath: copy) == Data(Self.pdb), "the copy arrives")
        #expect(FileManager.default.contents(atPath: file) == Data(Self.pdb), "the original stays")

        // The list works the same way, by descriptor.
        let listed = try CtlProcess.run(["open", "--list", "--socket", harness.socket, file], asNobody: true)
        #expect(listed.status == 0 && listed.output.contains(Self.molecules), "\(listed.output)\(listed.error)")

        // A file the daemon's user may read but nobody may not: naming its URL gets nothing.
        let daemonOnly = harness.root + "/daemon-only.pdb"
        try Data(Self.pdb).write(to: URL(fileURLWithPath: daemonOnly))
        chmod(daemonOnly, 0o600)
        chown(daemonOnly, Self.daemonUID, Self.daemonUID)
        let replies = try PythonClient.run(harness, ["url:" + daemonOnly], asNobody: true)
        let reply = try #require(replies.last)
        #expect(reply["type"] as? String == "error" && reply["code"] as? String == "not-permitted", "\(replies)")
        #expect((reply["message"] as? String)?.contains("descriptor") == true, "says what to do instead: \(reply)")
        #expect(!FileManager.default.fileExists(atPath: harness.sandbox(Self.molecules, mailbox: "Shared") + "/daemon-only.pdb"))
    }

    @Test func aFIFOAFolderOrAWriteOnlyDescriptorIsRefusedCleanly() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        let fifo = harness.root + "/pipe.pdb"
        mkfifo(fifo, 0o600)
        let folder = harness.root + "/folder.pdb"
        mkdir(folder, 0o700)
        let file = harness.root + "/1abc.pdb"
        try Data(Self.pdb).write(to: URL(fileURLWithPath: file))
        let replies = try PythonClient.run(harness, ["fifo:" + fifo, "dir:" + folder, "wo:" + file, "none:" + file, "ro:" + file, "candidates:" + file])
        #expect(replies.count == 7, "\(replies)")
        guard replies.count == 7 else { return }
        let welcome = replies[0]
        #expect(Set(welcome["features"] as? [String] ?? []) == ["candidates", "open-with", "open-descriptor", "release", "history", "redeliver", "compete"], "\(welcome)")
        #expect(welcome["descriptorSocket"] as? String == "s.fd.sock", "\(welcome)")
        for (reply, words) in zip(replies[1...4], ["FIFO", "folder", "not open for reading", "exactly one descriptor"]) {
            #expect(reply["type"] as? String == "error" && reply["code"] as? String == "bad-request", "\(reply)")
            #expect((reply["message"] as? String)?.contains(words) == true, "\(reply)")
        }
        #expect(replies[5]["type"] as? String == "opened" && replies[5]["bundleIdentifier"] as? String == Self.molecules, "\(replies[5])")
        #expect(Self.bundles(replies[6]).first == Self.molecules, "\(replies[6])")
        #expect(FileManager.default.contents(atPath: harness.sandbox(Self.molecules, mailbox: "Shared") + "/1abc.pdb") == Data(Self.pdb))
        // Still serving after the refusals.
        let client = try LineClient(path: harness.socket)
        defer { client.close() }
        try client.send(["type": "hello", "protocol": 1])
        #expect(client.readMessage()?["type"] as? String == "welcome")
    }
}

extension OpenInIntegrationTests {
    @Test func theClientLibraryPassesTheFileWheneverOffered() async throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        let file = harness.root + "/1abc.pdb"
        try Data(Self.pdb).write(to: URL(fileURLWithPath: file))
        let connection = try await DocRouteConnection.connect(socketPath: harness.socket)
        let welcome = try await connection.hello()
        #expect(welcome.features.isSuperset(of: ["candidates", "open-with", "open-descriptor"]))
        #expect(welcome.descriptorSocketPath == harness.root + "/s.fd.sock")
        let list = try await connection.candidates(filePath: file)
        #expect(list.contentType == "com.sunsetlakesoftware.molecules.pdb")
        #expect(list.candidates.map(\.bundleIdentifier) == [Self.molecules, Self.textviewer])
        #expect(list.candidates.map(\.isDefault) == [true, false])
        let opened = try await connection.open(filePath: file, mailbox: "Lab", bundleIdentifier: Self.textviewer)
        #expect(opened.bundleIdentifier == Self.textviewer)
        #expect(FileManager.default.contents(atPath: harness.sandbox(Self.textviewer, mailbox: "Lab") + "/1abc.pdb") == Data(Self.pdb))
        await #expect(throws: DocRouteClientError.self) { try await connection.open(filePath: harness.root + "/missing.pdb") }
        await connection.close()
    }

    @Test func aDescriptorLineOnTheMainSocketIsABadRequest() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        let client = try LineClient(path: harness.socket)
        defer { client.close() }
        try client.send(["type": "open", "id": "d", "descriptor": true, "name": "1abc.pdb"])
        let reply = try #require(client.readMessage())
        #expect(reply["code"] as? String == "bad-request" && reply["id"] as? String == "d", "\(reply)")
        #expect((reply["message"] as? String)?.contains("descriptor socket") == true, "\(reply)")
    }

    @Test func aBookmarkOfADeliveredDocumentFindsItAfterTheHandlerMovesIt() throws {
        let harness = try DaemonHarness()
        defer { harness.remove() }
        try harness.start()
        let file = harness.root + "/1abc.pdb"
        try Data(Self.pdb).write(to: URL(fileURLWithPath: file))
        let opened = try CtlProcess.run(["open", "--socket", harness.socket, file])
        #expect(opened.status == 0, "\(opened.error)")
        let delivered = harness.sandbox(Self.molecules, mailbox: "Shared") + "/1abc.pdb"
        let made = try CtlProcess.run(["bookmark", "create", delivered])
        #expect(made.status == 0, "\(made.error)")
        let data = made.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!data.isEmpty)
        // The handler files the document away inside its container.
        let container = harness.containers + "/" + Self.molecules
        try FileManager.default.createDirectory(atPath: container + "/Documents/Proteins", withIntermediateDirectories: true)
        #expect(rename(delivered, container + "/Documents/Proteins/insulin.pdb") == 0)
        let resolved = try CtlProcess.run(["bookmark", "resolve", data])
        #expect(resolved.status == 0, "\(resolved.error)")
        #expect(resolved.output == "file://\(container)/Documents/Proteins/insulin.pdb\nstale\n", "\(resolved.output)")
        // Handed to another handler's container: refused.
        let other = harness.containers + "/org.docroute.textviewer"
        try FileManager.default.createDirectory(atPath: other + "/Documents", withIntermediateDirectories: true)
        let refused = try CtlProcess.run(["bookmark", "resolve", data, "--container", other])
        #expect(refused.status == 1 && refused.error.contains("other-container"), "\(refused.error)")
        #expect(unlink(container + "/Documents/Proteins/insulin.pdb") == 0)
        let gone = try CtlProcess.run(["bookmark", "resolve", data])
        #expect(gone.status == 1 && gone.error.contains("not-found"), "\(gone.error)")
    }
}

/// A client written with nothing but Python's standard library (socket.send_fds), speaking
/// PROTOCOL.md: hello on the main socket, then one request per case on the descriptor socket.
enum PythonClient {
    static let script = #"""
        import json, os, socket, sys

        main = sys.argv[1]

        def request(path, message, fds=None):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            data = (json.dumps(message) + "\n").encode()
            if fds is None:
                s.sendall(data)
            else:
                # One sendmsg: the descriptor travels with the line's first byte.
                socket.send_fds(s, [data], fds)
            buffer = b""
            while b"\n" not in buffer:
                chunk = s.recv(65536)
                if not chunk:
                    break
                buffer += chunk
            s.close()
            return json.loads(buffer.split(b"\n")[0])

        welcome = request(main, {"type": "hello", "id": "h", "protocol": 1})
        print(json.dumps(welcome), flush=True)
        fdsock = os.path.join(os.path.dirname(main), welcome.get("descriptorSocket", ""))
        for case in sys.argv[2:]:
            kind, path = case.split(":", 1)
            name = os.path.basename(path)
            if kind == "url":
                reply = request(main, {"type": "open", "id": "u", "url": "file://" + path})
            elif kind == "none":
                reply = request(fdsock, {"type": "open", "id": "n", "descriptor": True, "name": name})
            else:
                flags = {"fifo": os.O_RDONLY | os.O_NONBLOCK, "dir": os.O_RDONLY | os.O_DIRECTORY,
                         "wo": os.O_WRONLY, "ro": os.O_RDONLY, "candidates": os.O_RDONLY}[kind]
                fd = os.open(path, flags)
                kind_type = "candidates" if kind == "candidates" else "open"
                reply = request(fdsock, {"type": kind_type, "id": kind, "descriptor": True, "name": name}, [fd])
                os.close(fd)
            print(json.dumps(reply), flush=True)
        """#

    /// Runs the script with `cases`; returns welcome, then one reply per case.
    static func run(_ harness: DaemonHarness, _ cases: [String], asNobody: Bool = false) throws -> [[String: Any]] {
        let path = harness.root + "/client.py"
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o644)
        let process = Process()
        if asNobody {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", path, harness.socket] + cases
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", path, harness.socket] + cases
        }
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }
}
