import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real PostgreSQL server from Debian's `postgresql` package, made for one test in a folder of
/// its own: `initdb` and `pg_ctl` run as the `postgres` user (through `runuser`, the folder given
/// to that user), with password (scram-sha-256) authentication on a Unix socket in the folder and
/// on a free loopback port, optionally with TLS (a self-signed certificate made by openssl), and
/// optionally on more addresses of the machine (a veth's, for a host in a network namespace of its
/// own), with password authentication for the client networks given.
///
/// A machine without PostgreSQL makes ``init(tls:)`` throw, so the test fails and says what to
/// install: it never passes without having run. ``stop()`` (call it in the test's tear-down)
/// stops the server by `pg_ctl`, or by its pid when that fails, and removes the folder.
public final class PostgresServer: @unchecked Sendable {
    /// Where Debian keeps PostgreSQL 15's programs.
    public static let binaries = "/usr/lib/postgresql/15/bin"
    /// The superuser the tests set things up as.
    public static let superuser = "postgres"

    public let folder: TemporaryFolder
    /// The folder of the Unix socket (`.s.PGSQL.<port>` in it).
    public let socketDirectory: String
    public let port: Int
    /// The superuser's password.
    public let superuserPassword: String
    /// The server's certificate (self-signed: it is its own authority), when started with TLS.
    public let certificateFile: String?
    let dataDirectory: String
    let logFile: String

    /// Makes the cluster and starts it; throws (the test fails) when PostgreSQL or runuser is missing.
    /// `listenAddresses` are listened on besides 127.0.0.1 (each must be an address of the machine
    /// already), and clients from `clientNetworks` (CIDR, `10.1.2.0/30`) may log in over TCP with a
    /// password, as from loopback.
    public init(tls: Bool = false, listenAddresses: [String] = [], clientNetworks: [String] = []) throws {
        for program in ["initdb", "pg_ctl", "postgres", "psql"] where !FileManager.default.isExecutableFile(atPath: Self.binaries + "/" + program) {
            throw TestSupportError("""
                PostgreSQL 15 is not installed: \(Self.binaries)/\(program) is missing. The fleet's tests need a real \
                server: apt-get install postgresql openssl (make test installs them)
                """)
        }
        guard let account = getpwnam(Self.superuser) else {
            throw TestSupportError("there is no user \(Self.superuser) (made by Debian's postgresql package): apt-get install postgresql")
        }
        guard geteuid() == 0 else {
            throw TestSupportError("starting PostgreSQL as the \(Self.superuser) user takes root (runuser); run the tests as root")
        }
        let uid = account.pointee.pw_uid
        let gid = account.pointee.pw_gid
        folder = try TemporaryFolder("pg")
        let root = folder.string
        socketDirectory = root
        dataDirectory = root + "/data"
        logFile = root + "/server.log"
        port = try Self.freeLoopbackPort()
        superuserPassword = "su-" + UUID().uuidString
        // The folder is the postgres user's: initdb makes the data folder in it, the server its socket.
        chown(root, uid, gid)
        chmod(root, 0o755)
        let passwordFile = root + "/superuser-password"
        try Data(superuserPassword.utf8).write(to: URL(fileURLWithPath: passwordFile))
        chown(passwordFile, uid, gid)
        chmod(passwordFile, 0o600)
        var settings = [
            "-c", "listen_addresses=\((["127.0.0.1"] + listenAddresses).joined(separator: ","))", "-p", "\(port)", "-c", "unix_socket_directories=\(root)",
            // A test server: nothing in it has to survive a crash of the machine.
            "-c", "fsync=off", "-c", "full_page_writes=off",
        ]
        if tls {
            let certificate = root + "/server.crt"
            let key = root + "/server.key"
            try Self.run("/usr/bin/openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                                              "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
                                              "-keyout", key, "-out", certificate], what: "openssl (apt-get install openssl)")
            for file in [certificate, key] { chown(file, uid, gid) }
            chmod(key, 0o600)
            settings += ["-c", "ssl=on", "-c", "ssl_cert_file=\(certificate)", "-c", "ssl_key_file=\(key)"]
            certificateFile = certificate
        } else {
            certificateFile = nil
        }
        self.startOptions = settings
        do {
            try Self.run("/usr/sbin/runuser", ["-u", Self.superuser, "--", Self.binaries + "/initdb", "-D", dataDirectory,
                                               "-U", Self.superuser, "--pwfile=\(passwordFile)", "--auth=scram-sha-256",
                                               "-E", "UTF8", "--no-sync", "--no-instructions"], what: "initdb")
            if !clientNetworks.isEmpty {
                let rules = clientNetworks.map { "host all all \($0) scram-sha-256\n" }.joined()
                let hba = try FileHandle(forWritingTo: URL(fileURLWithPath: dataDirectory + "/pg_hba.conf"))
                defer { try? hba.close() }
                try hba.seekToEnd()
                try hba.write(contentsOf: Data(rules.utf8))
            }
            try start()
        } catch {
            stop()
            throw error
        }
    }

    let startOptions: [String]

    /// Starts the server (again, after ``pause()``), waiting until it accepts connections.
    public func start() throws {
        let options = startOptions.map { $0.contains(" ") ? "'\($0)'" : $0 }.joined(separator: " ")
        try Self.run("/usr/sbin/runuser", ["-u", Self.superuser, "--", Self.binaries + "/pg_ctl", "-D", dataDirectory,
                                           "-l", logFile, "-w", "-t", "60", "-o", options, "start"], what: "pg_ctl start (\(logFile))")
    }

    /// Stops the server and keeps its data, for a test of what happens while it is down. `crash`
    /// stops it as a crash would (`-m immediate`: no checkpoint; the next start recovers from the
    /// WAL, and a transaction committed without `synchronous_commit` may be gone); otherwise it
    /// shuts down cleanly (`-m fast`).
    public func pause(crash: Bool = false) throws {
        try Self.run("/usr/sbin/runuser", ["-u", Self.superuser, "--", Self.binaries + "/pg_ctl", "-D", dataDirectory,
                                           "-m", crash ? "immediate" : "fast", "-w", "-t", "60", "stop"], what: "pg_ctl stop")
    }

    /// Stops the server (by pg_ctl; by its pid, SIGKILL, when that fails) and removes its folder.
    public func stop() {
        if (try? pause()) == nil, let pid = serverPID {
            kill(pid, SIGKILL)
            for _ in 0..<100 where kill(pid, 0) == 0 { usleep(50_000) }
        }
        folder.remove()
    }

    /// The postmaster's pid, from `postmaster.pid`, while it runs.
    public var serverPID: pid_t? {
        guard let text = try? String(contentsOfFile: dataDirectory + "/postmaster.pid", encoding: .utf8),
              let first = text.split(separator: "\n").first else { return nil }
        return pid_t(first)
    }

    /// A `postgresql://` URL to the port on `host` (loopback unless one of the `listenAddresses`
    /// is given; no password: docroute refuses one in its URL).
    public func url(user: String, database: String, sslmode: String? = nil, host: String = "127.0.0.1") -> String {
        "postgresql://\(user)@\(host):\(port)/\(database)" + (sslmode.map { "?sslmode=\($0)" } ?? "")
    }

    /// The Unix-socket form of the URL.
    public func socketURL(user: String, database: String) -> String {
        "postgresql:///\(database)?host=\(socketDirectory)&port=\(port)&user=\(user)"
    }

    /// Runs SQL as the superuser over the socket, stopping at the first error; returns psql's
    /// unaligned output, one row a line.
    @discardableResult
    public func psql(_ sql: String, database: String = "postgres") throws -> String {
        try Self.run(Self.binaries + "/psql", ["-h", socketDirectory, "-p", "\(port)", "-U", Self.superuser, "-d", database,
                                               "-v", "ON_ERROR_STOP=1", "-X", "-A", "-t", "-c", sql],
                     environment: ["PGPASSWORD": superuserPassword], what: "psql")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A login role with `password`, and a database owned by it: what the README tells an admin to make.
    public func createRoleAndDatabase(role: String, password: String, database: String) throws {
        try psql("CREATE ROLE \"\(role)\" LOGIN PASSWORD '\(password)'")
        try psql("CREATE DATABASE \"\(database)\" OWNER \"\(role)\"")
    }

    /// The server's log so far, for a failing test's message.
    public var log: String { (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "" }

    /// A loopback port nobody listens on now: bound to port 0, read back, closed.
    static func freeLoopbackPort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw TestSupportError("socket: \(String(cString: strerror(errno)))") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(socket, pointer, length) == 0 && getsockname(socket, pointer, &length) == 0
            }
        }
        guard bound else { throw TestSupportError("bind to 127.0.0.1:0: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Runs a program to its end (posix_spawn and waitpid), its output in a file; throws with that
    /// output when it fails. Not Foundation's Process: it learns of a child's end through a socket
    /// the child inherits, which the server `pg_ctl start` leaves running keeps open, so it would
    /// wait for the server to stop.
    @discardableResult
    static func run(_ program: String, _ arguments: [String], environment: [String: String] = [:], what: String) throws -> String {
        let output = "/tmp/docroute-pg-\(UUID().uuidString).out"
        defer { unlink(output) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let variables = ProcessInfo.processInfo.environment.merging(environment) { $1 }.map { "\($0.key)=\($0.value)" }
        // Started in /tmp (env -C): the postgres user may not be able to enter the test's own folder.
        var argv: [UnsafeMutablePointer<CChar>?] = (["/usr/bin/env", "-C", "/tmp", program] + arguments).map { strdup($0) } + [nil]
        var envp: [UnsafeMutablePointer<CChar>?] = variables.map { strdup($0) } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/usr/bin/env", &actions, nil, &argv, &envp)
        guard spawned == 0 else {
            throw TestSupportError("\(what): \(program) cannot be run: \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        // Exited normally with 0: WIFEXITED and WEXITSTATUS by hand (macros Swift does not import).
        guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
            throw TestSupportError("\(what) failed (wait status \(status)): \(text)")
        }
        return text
    }
}
