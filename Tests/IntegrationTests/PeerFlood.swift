import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs many protocol clients at once as another user (root only): a Python child drops to `uid`
/// with `os.setuid` before it connects, so the daemon sees that uid in `SO_PEERCRED`.
enum PeerFlood {
    /// What the flood saw: replies by `code` (or `type` when not an error), and connections that
    /// ended before the time was up.
    struct Result {
        var replies: [String: Int]
        var closedEarly: Int
        var output: String
    }

    /// `connections` clients each sending `line` and reading the reply, over and over for `seconds`.
    static func run(socket: String, uid: UInt32 = 65534, gid: UInt32 = 65534, connections: Int, seconds: Double,
                    line: String = #"{"type":"status","id":"s"}"#) throws -> Result {
        let script = """
            import json, os, socket, sys, threading, time
            path, count, seconds, line = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4].encode() + b"\\n"
            os.setgroups([]); os.setgid(int(sys.argv[6])); os.setuid(int(sys.argv[5]))
            replies, closed, lock = {}, [0], threading.Lock()
            start = threading.Barrier(count)
            def worker():
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.settimeout(30)
                s.connect(path)
                reader = s.makefile("rb")
                start.wait()
                end = time.time() + seconds
                try:
                    first = True
                    while first or time.time() < end:
                        first = False
                        s.sendall(line)
                        reply = reader.readline()
                        if not reply:
                            with lock: closed[0] += 1
                            return
                        message = json.loads(reply)
                        key = message.get("code") or message.get("type")
                        with lock: replies[key] = replies.get(key, 0) + 1
                except OSError:
                    with lock: closed[0] += 1
                finally:
                    s.close()
            threads = [threading.Thread(target=worker) for _ in range(count)]
            for t in threads: t.start()
            for t in threads: t.join()
            print(json.dumps({"replies": replies, "closed": closed[0]}))
            """
        let (object, text) = try PythonScript(script, [socket, "\(connections)", "\(seconds)", line, "\(uid)", "\(gid)"]).finish("the flood")
        return Result(replies: object["replies"] as? [String: Int] ?? [:], closedEarly: object["closed"] as? Int ?? 0, output: text)
    }

    /// A running connection flood: connections opened and held by several users at once.
    final class Hold {
        let process: Process
        /// Per uid: `admitted`, and `refused` by error code.
        let report: [String: Any]
        init(process: Process, report: [String: Any]) {
            self.process = process
            self.report = report
        }

        var admitted: Int { (report["admitted"] as? Int) ?? -1 }
        var refused: [String: Int] { (report["refused"] as? [String: Int]) ?? [:] }

        func wait() { process.waitUntilExit() }
    }

    /// Each uid in `uids` opens `perUID` connections and holds them for `seconds`; returns once
    /// all are open and each was seen either refused (an error line, then EOF) or admitted.
    static func hold(socket: String, uids: [UInt32], perUID: Int, seconds: Double) throws -> Hold {
        let script = """
            import json, os, socket, sys, time
            path, per, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
            uids = [int(u) for u in sys.argv[4].split(",")]
            r, w = os.pipe()
            children = []
            for uid in uids:
                pid = os.fork()
                if pid == 0:
                    os.close(r)
                    os.setgroups([]); os.setgid(uid); os.setuid(uid)
                    held, refused, admitted = [], {}, 0
                    for _ in range(per):
                        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                        s.connect(path)
                        held.append(s)
                    time.sleep(1.0)
                    for s in held:
                        s.setblocking(False)
                        try:
                            data = s.recv(65536)
                        except BlockingIOError:
                            admitted += 1
                            continue
                        try:
                            code = json.loads(data.split(b"\\n")[0]).get("code", "?")
                        except ValueError:
                            code = "closed"
                        refused[code] = refused.get(code, 0) + 1
                    os.write(w, (json.dumps({"admitted": admitted, "refused": refused}) + "\\n").encode())
                    time.sleep(seconds)
                    os._exit(0)
                children.append(pid)
            os.close(w)
            total, refused = 0, {}
            with os.fdopen(r) as reports:
                for _ in uids:
                    report = json.loads(reports.readline())
                    total += report["admitted"]
                    for code, count in report["refused"].items():
                        refused[code] = refused.get(code, 0) + count
                print("READY " + json.dumps({"admitted": total, "refused": refused}), flush=True)
                for pid in children:
                    os.waitpid(pid, 0)
            """
        let client = try PythonScript(script, [socket, "\(perUID)", "\(seconds)", uids.map(String.init).joined(separator: ",")])
        let report = try client.firstReport("the connection flood", marker: "READY ", timeout: 120).report
        return Hold(process: client.process, report: report)
    }

    /// Lets other users reach the harness's socket: mkdtemp made its root 0700.
    static func openRoot(_ harness: DaemonHarness) {
        chmod(harness.root, 0o755)
    }
}
