#!/usr/bin/env python3
"""A burst through the fleet against the same burst on one host, alternating, on this machine.

usage: bench/fleet-burst.py <docrouted> [FILES] [--rounds=N] [--instances=K]
       (root: PostgreSQL runs as the postgres user; apt-get install postgresql)

Each round starts a PostgreSQL of its own (Debian's, in a folder under .build, a Unix socket only,
trust authentication, fsync on), then:
- local: one docrouted without [fleet], a handler subscribed to it, FILES × 4 KiB renamed into its
  inbox; the time until the handler has acknowledged every one;
- fleet: host A takes the files in (its inbox), K hosts B1..BK each with the handler subscribed;
  the time from the first rename on A until the handlers together have acknowledged every one.
Rates are files per second until acknowledged; CPU is user + system of each docrouted and of
PostgreSQL's processes, per file. The figures are medians over the rounds; the ratio is fleet to
local, from the same rounds.
"""
import importlib.util
import os
import pwd
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("step_profile", os.path.join(here, "step-profile.py"))
step_profile = importlib.util.module_from_spec(spec)
spec.loader.exec_module(step_profile)

POSTGRES_BIN = "/usr/lib/postgresql/15/bin"
PORT = 5433


def as_postgres(arguments: list[str]) -> None:
    subprocess.run(["runuser", "-u", "postgres", "--"] + arguments, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def cpu_seconds(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def postgres_cpu(data: str) -> float:
    """User + system seconds of the server's processes now alive (the postmaster and its children)."""
    postmaster = int(open(os.path.join(data, "postmaster.pid")).readline())
    total = cpu_seconds(postmaster)
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()
                if int(stat[1]) == postmaster:
                    total += cpu_seconds(int(entry))
            except (OSError, IndexError):
                pass
    return total


class Host:
    def __init__(self, docrouted: str, root: str, name: str, fleet: str | None):
        self.root = os.path.join(root, name)
        for folder in ("inbox", "stage", "handlers", "containers", "state", "quarantine"):
            os.makedirs(os.path.join(self.root, folder))
        with open(os.path.join(self.root, "handlers/everything.plist"), "w") as f:
            f.write(step_profile.HANDLER)
        text = (f'socket = "{self.root}/s.sock"\nstate_directory = "{self.root}/state"\n'
                f'containers_directory = "{self.root}/containers"\nhandlers_directory = "{self.root}/handlers"\n'
                f'quarantine_directory = "{self.root}/quarantine"\nmax_unacknowledged = 256\n'
                f'[[inbox]]\npath = "{self.root}/inbox"\nkind = "directory"\ndefault_mailbox = "Inbox"\n')
        if fleet:
            text += f'[fleet]\ndatabase = "{fleet}"\nhost_name = "{name}"\n'
        with open(os.path.join(self.root, "docroute.toml"), "w") as f:
            f.write(text)
        self.log = open(os.path.join(self.root, "daemon.log"), "w")
        self.process = subprocess.Popen([docrouted, "--config", os.path.join(self.root, "docroute.toml"), "--log-level", "warning"],
                                        stdout=self.log, stderr=self.log)
        deadline = time.monotonic() + 30
        while not os.path.exists(os.path.join(self.root, "s.sock")):
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise SystemExit(f"docrouted {name} did not start: {open(self.log.name).read()[-2000:]}")
            time.sleep(0.05)

    def stop(self) -> float:
        seconds = cpu_seconds(self.process.pid)
        self.process.terminate()
        self.process.wait()
        return seconds


def burst(docrouted: str, files: int, fleet: bool, instances: int) -> dict[str, float]:
    root = tempfile.mkdtemp(prefix="fleet-burst-", dir=os.path.join(os.getcwd(), ".build"))
    data = os.path.join(root, "pg")
    sockets = os.path.join(root, "pgsock")
    postgres = pwd.getpwnam("postgres")
    try:
        os.chmod(root, 0o755)
        url = None
        if fleet:
            for folder in (sockets, data):
                os.makedirs(folder, mode=0o700)
                os.chown(folder, postgres.pw_uid, postgres.pw_gid)
            as_postgres([f"{POSTGRES_BIN}/initdb", "-D", data, "-A", "trust", "-U", "postgres"])
            as_postgres([f"{POSTGRES_BIN}/pg_ctl", "-D", data, "-w", "-l", os.path.join(sockets, "log"), "-o",
                         f"-k {sockets} -p {PORT} -c listen_addresses=''", "start"])
            as_postgres([f"{POSTGRES_BIN}/psql", "-h", sockets, "-p", str(PORT), "-c", "CREATE DATABASE fleet", "postgres"])
            url = f"postgresql:///fleet?host={sockets}&port={PORT}&user=postgres"
        intake = Host(docrouted, root, "a", url)
        handlers = [Host(docrouted, root, f"b{index + 1}", url) for index in range(instances)] if fleet else [intake]
        body = b"HEADER\n" + b" " * 4089
        stage = os.path.join(intake.root, "stage")
        for index in range(files):
            with open(os.path.join(stage, f"f{index}.pdb"), "wb") as f:
                f.write(body)
        os.sync()
        time.sleep(2 if fleet else 0.5)  # the hosts register and start listening
        subscribers = [step_profile.Subscriber(os.path.join(host.root, "s.sock")) for host in handlers]
        for subscriber in subscribers:
            subscriber.start()
        postgres_before = postgres_cpu(data) if fleet else 0.0
        start = time.monotonic()
        for index in range(files):
            os.rename(os.path.join(stage, f"f{index}.pdb"), os.path.join(intake.root, "inbox", f"f{index}.pdb"))
        deadline = start + max(120, files / 50)
        while sum(subscriber.acknowledged for subscriber in subscribers) < files:
            if time.monotonic() > deadline:
                raise SystemExit(f"only {sum(s.acknowledged for s in subscribers)} of {files} acknowledged; "
                                 f"logs under {root}")
            time.sleep(0.02)
        seconds = time.monotonic() - start
        figures = {"rate": files / seconds, "per_handler": [s.acknowledged for s in subscribers]}
        figures["postgres_cpu"] = (postgres_cpu(data) - postgres_before) / files * 1e6 if fleet else 0.0
        figures["intake_cpu"] = intake.stop() / files * 1e6
        figures["handler_cpu"] = sum(host.stop() for host in handlers if host is not intake) / files * 1e6
        if fleet:
            as_postgres([f"{POSTGRES_BIN}/pg_ctl", "-D", data, "-w", "-m", "fast", "stop"])
        return figures
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> int:
    positional = [argument for argument in sys.argv[1:] if not argument.startswith("--")]
    docrouted = os.path.abspath(positional[0])
    files = int(positional[1]) if len(positional) > 1 else 10_000
    rounds = next((int(a.split("=", 1)[1]) for a in sys.argv if a.startswith("--rounds=")), 3)
    instances = next((int(a.split("=", 1)[1]) for a in sys.argv if a.startswith("--instances=")), 1)
    local, fleet = [], []
    for number in range(rounds):
        local.append(burst(docrouted, files, False, 1))
        fleet.append(burst(docrouted, files, True, instances))
        print(f"round {number + 1}: local {local[-1]['rate']:,.0f} files/s; fleet {fleet[-1]['rate']:,.0f} files/s "
              f"(handled {fleet[-1]['per_handler']}); CPU per file µs: local {local[-1]['intake_cpu']:.0f}, "
              f"fleet intake {fleet[-1]['intake_cpu']:.0f} + handler hosts {fleet[-1]['handler_cpu']:.0f} "
              f"+ PostgreSQL {fleet[-1]['postgres_cpu']:.0f}", flush=True)
    local_rate = statistics.median(r["rate"] for r in local)
    fleet_rate = statistics.median(r["rate"] for r in fleet)
    ratios = [f["rate"] / l["rate"] for l, f in zip(local, fleet)]
    print(f"median of {rounds}: local {local_rate:,.0f} files/s, fleet ({instances} handler host"
          f"{'' if instances == 1 else 's'}) {fleet_rate:,.0f} files/s; fleet/local per round "
          f"{', '.join(f'{r:.2f}' for r in ratios)} (median {statistics.median(ratios):.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
