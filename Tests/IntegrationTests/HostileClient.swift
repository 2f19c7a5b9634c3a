import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Attacks on the daemon by a local user who is no administrator and no handler (root only: a
/// Python child drops to `uid` before it connects, so the daemon sees that uid in `SO_PEERCRED`).
/// Each runs for a bounded time, then prints one JSON line of what it saw.
enum HostileClient {
    /// What an attack saw.
    struct Report {
        var object: [String: Any]
        var output: String

        func count(_ key: String) -> Int { object[key] as? Int ?? 0 }
        /// The error messages the daemon sent before closing connections, by text.
        var messages: [String: Int] { object["messages"] as? [String: Int] ?? [:] }
    }

    /// A running attack; ``finish()`` waits for its report.
    struct Running {
        let client: PythonScript

        var process: Process { client.process }

        /// Waits for the attack to end and reads its last report line.
        func finish() throws -> Report {
            let (object, text) = try client.finish("the attack")
            return Report(object: object, output: text)
        }

        /// Reads the first report line while the attack goes on (it holds what it took meanwhile).
        func firstReport() throws -> Report {
            let (object, text) = try client.firstReport("the attack")
            return Report(object: object, output: text)
        }
    }

    static func start(_ script: String, _ arguments: [String]) throws -> Running {
        Running(client: try PythonScript(prelude + script, arguments))
    }

    /// What every attack script shares: becoming `uid`, and reading the line a closed connection got.
    static let prelude = """
        import array, json, os, socket, sys, threading, time
        def become(uid):
            os.setgroups([]); os.setgid(uid); os.setuid(uid)
        def last_line(s):
            s.settimeout(2)
            data = b""
            try:
                while not data.endswith(b"\\n"):
                    chunk = s.recv(65536)
                    if not chunk: break
                    data += chunk
            except OSError:
                pass
            lines = [l for l in data.split(b"\\n") if l]
            if not lines: return "closed"
            try:
                return json.loads(lines[-1]).get("message", "?")
            except ValueError:
                return "?"

        """

    /// Connections to the descriptor socket that each send one byte with eight descriptors, over
    /// and over, never a newline (a descriptor hoard); beside them, connections to the main socket
    /// asking `candidates` as fast as they are answered.
    static func hoardDescriptors(descriptorSocket: String, mainSocket: String, uid: UInt32, connections: Int,
                                 candidateConnections: Int, seconds: Double) throws -> Running {
        let script = """
            path, main, uid, count, asking, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
            become(uid)
            null = os.open("/dev/null", os.O_RDONLY)
            rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [null] * 8))]
            lock = threading.Lock()
            report = {"sendmsg": 0, "connected": 0, "messages": {}, "answered": 0}
            end = time.time() + seconds
            def hoard():
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    s.connect(path)
                except OSError as error:
                    with lock: report["messages"][str(error)] = report["messages"].get(str(error), 0) + 1
                    return
                with lock: report["connected"] += 1
                sent = 0
                try:
                    while time.time() < end:
                        s.sendmsg([b"{"], rights)
                        sent += 1
                except OSError:
                    pass
                with lock: report["sendmsg"] += sent
                message = last_line(s)
                with lock: report["messages"][message] = report["messages"].get(message, 0) + 1
                s.close()
            def ask():
                while time.time() < end:
                    try:
                        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                        s.settimeout(5)
                        s.connect(main)
                        reader = s.makefile("rb")
                        while time.time() < end:
                            s.sendall(b'{"type":"candidates","id":"c","url":"file:///etc/hostname"}\\n')
                            if not reader.readline(): break
                            with lock: report["answered"] += 1
                        s.close()
                    except OSError:
                        time.sleep(0.05)
            threads = [threading.Thread(target=hoard) for _ in range(count)] + [threading.Thread(target=ask) for _ in range(asking)]
            for t in threads: t.start()
            for t in threads: t.join()
            print(json.dumps(report))
            """
        return try start(script, [descriptorSocket, mainSocket, "\(uid)", "\(connections)", "\(candidateConnections)", "\(seconds)"])
    }

    /// One connection to the descriptor socket that sends one byte of a line every `interval`
    /// seconds, never ending it, for at most `seconds`; reports when the daemon closed it.
    static func trickle(descriptorSocket: String, uid: UInt32, interval: Double, seconds: Double) throws -> Running {
        let script = """
            path, uid, interval, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
            become(uid)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            start = time.time()
            closed_after = None
            while time.time() - start < seconds:
                try:
                    s.send(b"{")
                except OSError:
                    closed_after = time.time() - start
                    break
                s.settimeout(interval)
                try:
                    if s.recv(65536) == b"":
                        closed_after = time.time() - start
                        break
                except socket.timeout:
                    pass
                except OSError:
                    closed_after = time.time() - start
                    break
            print(json.dumps({"closedAfter": closed_after if closed_after is not None else -1}))
            """
        return try start(script, [descriptorSocket, "\(uid)", "\(interval)", "\(seconds)"])
    }

    /// `connections` connections to the descriptor socket from `uid`, held for `seconds`; reports
    /// how many were admitted and what the refused ones were told.
    static func holdDescriptorSocket(_ descriptorSocket: String, uid: UInt32, connections: Int, seconds: Double) throws -> Running {
        let script = """
            path, uid, count, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
            become(uid)
            held, report = [], {"admitted": 0, "messages": {}}
            for _ in range(count):
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(path)
                held.append(s)
            time.sleep(1.0)
            for s in held:
                s.setblocking(False)
                try:
                    data = s.recv(65536)
                except BlockingIOError:
                    report["admitted"] += 1
                    continue
                message = json.loads(data.split(b"\\n")[0]).get("code", "?") if data else "closed"
                report["messages"][message] = report["messages"].get(message, 0) + 1
            print(json.dumps(report), flush=True)
            time.sleep(seconds)
            """
        return try start(script, [descriptorSocket, "\(uid)", "\(connections)", "\(seconds)"])
    }

    /// Descriptors the process `pid` holds open now.
    static func openDescriptors(of pid: Int32) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
    }
}
