"""What the fleet's benchmarks share: a PostgreSQL of their own, docrouted hosts, handlers, clocks.

Imported by bench/fleet-latency.py, bench/fleet-scaling.py and bench/fleet-large.py; not a
benchmark itself. Everything a run starts lives under one temporary folder beside the build
(`.build/fleet-bench-*`, on the project's file system), or under `$DOCROUTE_BENCH_DIR` when set
(bench/on-journaled-ext4.sh sets it to a journaled ext4 of its own): PostgreSQL's data and socket folders
and each host's inbox, state, sandboxes and log (`daemon.log`; `--log-level=debug` on any
script's command line raises the daemons' level from `warning`, with `--keep` to read it).
`$DOCROUTE_BENCH_PLACES` (`pg=DIR a=DIR b=DIR`, any of them) puts PostgreSQL's folders or a host's
under a folder of its own instead, such as a file system of its own, as the machines of a real
fleet have: a host's `syncfs` then flushes only what that host wrote
(`bench/on-journaled-ext4.sh --places "pg a b"`). `Run.close()` stops every process it started,
by its pid (PostgreSQL through `pg_ctl` on its own data folder), and removes its folders; it runs
on an exception, Ctrl-C and SIGTERM too. Needs root: PostgreSQL (Debian's `postgresql` 15
package) runs as the postgres user.
"""
import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

POSTGRES_BIN = "/usr/lib/postgresql/15/bin"
PORT = 5433  # only names the socket file, in a folder of the run's own

HANDLER = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0"><dict>
<key>CFBundleIdentifier</key><string>org.example.everything</string>
<key>CFBundleDocumentTypes</key><array><dict>
<key>LSItemContentTypes</key><array><string>public.data</string><string>public.text</string><string>com.sunsetlakesoftware.molecules.pdb</string></array>
<key>CFBundleTypeRole</key><string>Viewer</string></dict></array>
</dict></plist>
"""
BUNDLE = "org.example.everything"
BODY_4K = b"HEADER\n" + b" " * 4089


def _terminate_on_sigterm() -> None:
    """SIGTERM unwinds like Ctrl-C, so every `finally` (and `Run.close`) runs."""
    def handler(number, frame):
        raise SystemExit(128 + number)
    signal.signal(signal.SIGTERM, handler)


_terminate_on_sigterm()


def run_main(main, name: str) -> None:
    """Runs a benchmark's `main` and exits with its status; a failure it meets (a process that would
    not start, a file that would not come) is one line on standard error and status 1."""
    try:
        sys.exit(main())
    except (RuntimeError, OSError, ValueError, subprocess.SubprocessError) as error:
        print(f"{name}: {error}", file=sys.stderr)
        sys.exit(1)


def load() -> str:
    """The load average as /proc/loadavg gives it (1, 5, 15 minutes)."""
    return " ".join(open("/proc/loadavg").read().split()[:3])


def wait_for_quiet(threshold: float | None, patience: float) -> str:
    """Waits up to `patience` seconds for the 1-minute load to fall under `threshold`; returns the load then."""
    if threshold is None:
        return load()
    deadline = time.monotonic() + patience
    while float(load().split()[0]) >= threshold and time.monotonic() < deadline:
        time.sleep(5)
    return load()


def cpu_seconds(pid: int) -> float:
    """User + system seconds of one process (its threads included)."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_resident_mib(pid: int) -> float:
    """VmHWM: the process's peak resident memory, MiB."""
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def option(name: str, default, kind=str):
    """`--name=value` from the command line, or the default."""
    import sys
    for argument in sys.argv[1:]:
        if argument.startswith(f"--{name}="):
            return kind(argument.split("=", 1)[1])
    return default


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(fraction * len(ordered) + 0.5)) - 1))]


class Host:
    """One docrouted with its own inbox, state, sandboxes, socket and log, in or out of the fleet."""

    def __init__(self, docrouted: str, root: str, name: str, fleet: str | None):
        self.name = name
        self.root = os.path.join(root, name)
        for folder in ("inbox", "stage", "handlers", "containers", "state", "quarantine"):
            os.makedirs(os.path.join(self.root, folder))
        with open(os.path.join(self.root, "handlers/everything.plist"), "w") as f:
            f.write(HANDLER)
        text = (f'socket = "{self.root}/s.sock"\nstate_directory = "{self.root}/state"\n'
                f'containers_directory = "{self.root}/containers"\nhandlers_directory = "{self.root}/handlers"\n'
                f'quarantine_directory = "{self.root}/quarantine"\nmax_unacknowledged = 256\n'
                f'[[inbox]]\npath = "{self.root}/inbox"\nkind = "directory"\ndefault_mailbox = "Inbox"\n')
        if fleet:
            text += f'[fleet]\ndatabase = "{fleet}"\nhost_name = "{name}"\n'
        with open(os.path.join(self.root, "docroute.toml"), "w") as f:
            f.write(text)
        self.log_path = os.path.join(self.root, "daemon.log")
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen([docrouted, "--config", os.path.join(self.root, "docroute.toml"),
                                         "--log-level", option("log-level", "warning")],
                                        stdout=self.log, stderr=self.log)
        self.socket = os.path.join(self.root, "s.sock")
        deadline = time.monotonic() + 30
        while not os.path.exists(self.socket):
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.stop()
                raise RuntimeError(f"docrouted {name} did not start: {open(self.log_path).read()[-2000:]}")
            time.sleep(0.05)
        self.cpu_mark = 0.0

    @property
    def inbox(self) -> str:
        return os.path.join(self.root, "inbox")

    @property
    def stage(self) -> str:
        return os.path.join(self.root, "stage")

    @property
    def sandbox(self) -> str:
        return os.path.join(self.root, "containers", BUNDLE, "Documents/Inbox/Inbox")

    def cpu(self) -> float:
        return cpu_seconds(self.process.pid)

    def mark(self) -> None:
        """Starts counting CPU from now (start-up, loading types and manifests, left out)."""
        self.cpu_mark = self.cpu()

    def cpu_since_mark(self) -> float:
        return self.cpu() - self.cpu_mark

    def peak_mib(self) -> float:
        return peak_resident_mib(self.process.pid)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


# --statements: PostgreSQL counts every statement (pg_stat_statements) so that a run can print
# which statements a file costs; off by default, since counting costs the server time too.
STATEMENT_OPTIONS = (" -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all"
                     if "--statements" in sys.argv else "") + os.environ.get("FLEET_BENCH_POSTGRES_OPTIONS", "")


class Postgres:
    """Debian's PostgreSQL 15 in a folder of the run's own: Unix socket only, trust, fsync on."""

    def __init__(self, root: str):
        self.data = os.path.join(root, "pg")
        self.sockets = os.path.join(root, "pgsock")
        user = pwd.getpwnam("postgres")
        for folder in (self.sockets, self.data):
            os.makedirs(folder, mode=0o700)
            os.chown(folder, user.pw_uid, user.pw_gid)
        self.running = False
        self.url = f"postgresql:///fleet?host={self.sockets}&port={PORT}&user=postgres"

    def start(self) -> None:
        self.as_postgres([f"{POSTGRES_BIN}/initdb", "-D", self.data, "-A", "trust", "-U", "postgres"])
        # Counted as running before pg_ctl returns, so that a failure or a signal from here on stops it.
        self.running = True
        self.as_postgres([f"{POSTGRES_BIN}/pg_ctl", "-D", self.data, "-w", "-l", os.path.join(self.sockets, "log"),
                          "-o", f"-k {self.sockets} -p {PORT} -c listen_addresses='' -c fsync=on" + STATEMENT_OPTIONS, "start"])
        self.psql("CREATE DATABASE fleet", database="postgres")
        if STATEMENT_OPTIONS:
            self.psql("CREATE EXTENSION pg_stat_statements")

    def statements(self, files: int, most: int = 25) -> str:
        """The statements run most often since the server started, each with its calls per file,
        its mean time and the WAL it wrote (pg_stat_statements; --statements)."""
        return self.psql(
            "SELECT lpad(to_char(calls::float / " + str(files) + ", 'FM990.00'), 7) || ' calls/file  ' "
            "|| lpad(to_char(mean_exec_time, 'FM990.000'), 8) || ' ms  ' "
            "|| lpad(wal_records::text, 7) || ' WAL records  ' "
            "|| regexp_replace(left(query, 150), '\\s+', ' ', 'g') "
            f"FROM pg_stat_statements ORDER BY calls DESC LIMIT {most}")

    @staticmethod
    def as_postgres(arguments: list[str], capture: bool = False) -> str:
        done = subprocess.run(["runuser", "-u", "postgres", "--"] + arguments, check=True,
                              stdout=subprocess.PIPE if capture else subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        return done.stdout if capture else ""

    def psql(self, command: str, database: str = "fleet", quiet: bool = True) -> str:
        """psql -c COMMAND, its output (tuples only, unaligned); ON_ERROR_STOP, so a failure raises."""
        return self.as_postgres([f"{POSTGRES_BIN}/psql", "-X", "-t", "-A", "-v", "ON_ERROR_STOP=1"]
                                + (["-q"] if quiet else []) + ["-h", self.sockets, "-p", str(PORT),
                                                               "-c", command, database], capture=True)

    def postmaster(self) -> int:
        return int(open(os.path.join(self.data, "postmaster.pid")).readline())

    def cpu(self) -> float:
        """User + system seconds of the server: the postmaster, its children alive, and those it has
        reaped (a backend that exited, psql's; the postmaster's cutime and cstime)."""
        postmaster = self.postmaster()
        fields = open(f"/proc/{postmaster}/stat").read().rsplit(")", 1)[1].split()
        total = sum(int(fields[index]) for index in (11, 12, 13, 14)) / os.sysconf("SC_CLK_TCK")
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    stat = open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()
                    if int(stat[1]) == postmaster:
                        total += cpu_seconds(int(entry))
                except (OSError, IndexError, ValueError):
                    pass
        return total

    def stop(self) -> None:
        """pg_ctl stop on the run's own data folder (it signals the postmaster named in postmaster.pid)."""
        if self.running and os.path.exists(os.path.join(self.data, "postmaster.pid")):
            self.running = False
            self.as_postgres([f"{POSTGRES_BIN}/pg_ctl", "-D", self.data, "-w", "-m", "fast", "stop"])


class Handler(threading.Thread):
    """A subscribed handler: records when each document's event arrived, spends `work` seconds on
    it (a sleep, no CPU), then acknowledges it. Documents are handled one at a time, in order."""

    def __init__(self, path: str, work: float = 0.0):
        super().__init__(daemon=True)
        self.work = work
        self.connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.connection.connect(path)
        self.connection.sendall(b'{"type":"subscribe","id":"1","bundleIdentifier":"' + BUNDLE.encode() + b'"}\n')
        self.received: dict[str, float] = {}  # the copy's file name → monotonic time its event arrived
        self.acknowledged = 0
        self.last_ack = 0.0
        self.closed = False

    def run(self) -> None:
        pending = b""
        while True:
            try:
                chunk = self.connection.recv(1 << 16)
            except OSError:
                break
            now = time.monotonic()
            if not chunk:
                break
            pending += chunk
            *lines, pending = pending.split(b"\n")
            acks = []
            for line in lines:
                if b'"deliveryID"' not in line:
                    continue
                event = json.loads(line)
                url = event.get("url") or event.get("launchOptions", {}).get("UIApplicationLaunchOptionsURLKey", "")
                self.received[os.path.basename(urllib.parse.unquote(urllib.parse.urlparse(url).path))] = now
                ack = b'{"type":"ack","deliveryID":"' + event["deliveryID"].encode() + b'","handled":true}\n'
                if self.work:
                    time.sleep(self.work)
                    self.send(ack)
                else:
                    acks.append(ack)
            if acks:
                self.send(b"".join(acks), len(acks))
        self.closed = True

    def send(self, data: bytes, count: int = 1) -> None:
        try:
            self.connection.sendall(data)
        except OSError:
            return
        self.acknowledged += count
        self.last_ack = time.monotonic()

    def close(self) -> None:
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.connection.close()


def index_of(name: str) -> int | None:
    """`f123.pdb` (or a copy renamed `f123-1.pdb`) → 123."""
    found = re.match(r"f(\d+)(?:-\d+)?\.pdb$", name)
    return int(found.group(1)) if found else None


class Run:
    """One measurement's world: a temporary folder, maybe a PostgreSQL, hosts and handlers.

    Use as a context manager; leaving it stops everything it started and removes its folders, the
    run's own and any under a place (`--keep` on the command line keeps them, with the daemons'
    logs, and prints them).
    """

    def __init__(self, docrouted: str, prefix: str = "fleet-bench-"):
        self.docrouted = docrouted
        build = os.environ.get("DOCROUTE_BENCH_DIR") or os.path.join(
            os.path.dirname(os.path.dirname(os.path.abspath(__file__))), ".build")
        os.makedirs(build, exist_ok=True)
        self.root = tempfile.mkdtemp(prefix=prefix, dir=build)
        os.chmod(self.root, 0o755)
        self.prefix = prefix
        self.places = dict(entry.split("=", 1) for entry in os.environ.get("DOCROUTE_BENCH_PLACES", "").split() if "=" in entry)
        self.other_roots: list[str] = []
        self.postgres: Postgres | None = None
        self.hosts: list[Host] = []
        self.handlers: list[Handler] = []

    def __enter__(self) -> "Run":
        return self

    def __exit__(self, *exception) -> None:
        self.close()

    def root_of(self, name: str) -> str:
        """The folder that holds `name`'s folder: the run's own, or one under its place."""
        place = self.places.get(name)
        if not place:
            return self.root
        root = tempfile.mkdtemp(prefix=self.prefix, dir=place)
        os.chmod(root, 0o755)
        self.other_roots.append(root)
        return root

    def start_postgres(self) -> Postgres:
        self.postgres = Postgres(self.root_of("pg"))
        self.postgres.start()
        return self.postgres

    def host(self, name: str, fleet: bool) -> Host:
        if fleet and not self.postgres:
            raise RuntimeError("a fleet host needs start_postgres() first")
        host = Host(self.docrouted, self.root_of(name), name, self.postgres.url if fleet else None)
        self.hosts.append(host)
        return host

    def handler(self, host: Host, work: float = 0.0) -> Handler:
        handler = Handler(host.socket, work)
        self.handlers.append(handler)
        handler.start()
        return handler

    def close(self) -> None:
        import sys
        for handler in self.handlers:
            handler.close()
        for host in self.hosts:
            try:
                host.stop()
            except Exception as error:  # keep stopping the rest
                print(f"stopping {host.name}: {error}", file=sys.stderr)
        if self.postgres:
            try:
                self.postgres.stop()
            except Exception as error:
                print(f"stopping PostgreSQL: {error}", file=sys.stderr)
        for root in [self.root] + self.other_roots:
            if "--keep" in sys.argv:
                print(f"kept: {root}", file=sys.stderr)
            else:
                shutil.rmtree(root, ignore_errors=True)


def write_files(folder: str, count: int, body: bytes = BODY_4K) -> None:
    for index in range(count):
        with open(os.path.join(folder, f"f{index}.pdb"), "wb") as f:
            f.write(body)
    os.sync()


def wait_until(condition, timeout: float, what: str, interval: float = 0.01) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


class Departures(threading.Thread):
    """When each file left a folder (moved out or removed), by name, on the monotonic clock: inotify.

    For an inbox this is when intake is done with the source: after the commit (into the local
    ledger, or into PostgreSQL for a fleet host), so it splits a file's latency into intake and the rest.
    """

    IN_MOVED_FROM = 0x40
    IN_DELETE = 0x200

    def __init__(self, folder: str):
        super().__init__(daemon=True)
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        self.descriptor = libc.inotify_init1(os.O_CLOEXEC)
        if self.descriptor < 0 or libc.inotify_add_watch(self.descriptor, folder.encode(),
                                                         self.IN_MOVED_FROM | self.IN_DELETE) < 0:
            raise OSError(ctypes.get_errno(), f"inotify on {folder}")
        self.left: dict[str, float] = {}
        self.stopping = False

    def run(self) -> None:
        import select
        import struct
        while not self.stopping:
            ready, _, _ = select.select([self.descriptor], [], [], 0.2)
            if not ready:
                continue
            data = os.read(self.descriptor, 1 << 16)
            now = time.monotonic()
            offset = 0
            while offset + 16 <= len(data):
                _, mask, _, length = struct.unpack_from("iIII", data, offset)
                name = data[offset + 16:offset + 16 + length].split(b"\0", 1)[0].decode(errors="replace")
                offset += 16 + length
                self.left.setdefault(name, now)

    def stop(self) -> None:
        self.stopping = True
        self.join(timeout=2)
        os.close(self.descriptor)
