#!/usr/bin/env python3
"""Latency through the fleet: a file renamed into host A's inbox until host B sends its `openURL`.

usage: bench/fleet-latency.py <docrouted> [--rate=200] [--seconds=20] [--rounds=1]
                              [--quiet-load=L] [--quiet-wait=S] [--series] [--statements]
                              [--log-level=LEVEL] [--keep]
       (root: PostgreSQL runs as the postgres user; apt-get install postgresql)

Each round, on this machine (one monotonic clock for every timestamp):
- local: one docrouted without [fleet], a handler subscribed to it; RATE × SECONDS files of
  4 KiB renamed into its inbox at a steady RATE files/s (each rename at its time on the clock,
  not as fast as possible);
- fleet: a PostgreSQL 15 of the round's own (Debian's, Unix socket, trust, fsync on), host A
  with nobody subscribed (intake only), host B with the handler subscribed; the same files at
  the same rate renamed into A's inbox.
The latency of a file is the time from its rename returning to the handler's receiving its
event (`openURL`, or `launch`), the file known by the copy's name. The handler acknowledges
each event at once. The time until the source left A's inbox (inotify: intake's commit done,
into PostgreSQL in the fleet) is printed too: the part of the latency spent on the intake host.
Printed per round and side: p50, p90, p99, p99.9 and max in ms, CPU per file (user + system of
each docrouted and of PostgreSQL's processes, from the first rename to the last
acknowledgement), the load average; then the medians over the rounds and a one-line summary
against the target (p99 under 20 ms through the fleet). --series prints the p50 and max of each
second's files too (a backlog building up shows there); --statements has PostgreSQL count its
statements (pg_stat_statements) and prints them, with calls per file. --quiet-load=L waits before each round
(up to --quiet-wait seconds, default 600) for the 1-minute load to fall under L. Exits 1 when a
file was not delivered, or on any failure; 0 otherwise (a missed target is printed, not an
error). Everything started is stopped by pid and its folder removed
(--keep keeps the folder with the daemons' logs; --log-level=debug makes them say more).
"""
import os
import statistics
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ left in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleet_common as fc  # noqa: E402

TARGET_P99_MS = 20.0


def measure(docrouted: str, fleet: bool, rate: float, files: int) -> dict:
    with fc.Run(docrouted, "fleet-latency-") as run:
        if fleet:
            run.start_postgres()
        intake = run.host("a", fleet)
        target = run.host("b", True) if fleet else intake
        fc.write_files(intake.stage, files)
        handler = run.handler(target)
        departures = fc.Departures(intake.inbox)
        departures.start()
        time.sleep(2 if fleet else 0.5)  # the hosts register and listen; the launch event comes and goes
        for host in run.hosts:
            host.mark()
        postgres_before = run.postgres.cpu() if fleet else 0.0
        load_before = fc.load()
        renamed = [0.0] * files
        start = time.monotonic()
        for index in range(files):
            delay = start + index / rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            os.rename(os.path.join(intake.stage, f"f{index}.pdb"), os.path.join(intake.inbox, f"f{index}.pdb"))
            renamed[index] = time.monotonic()
        fc.wait_until(lambda: len(handler.received) >= files and handler.acknowledged >= files,
                      60 + files / 50, f"{files} deliveries (have {len(handler.received)})")
        figures = {
            "intake_cpu": intake.cpu_since_mark() / files * 1e6,
            "handler_cpu": target.cpu_since_mark() / files * 1e6 if fleet else 0.0,
            "postgres_cpu": (run.postgres.cpu() - postgres_before) / files * 1e6 if fleet else 0.0,
            "load": f"{load_before} → {fc.load()}",
        }
        fc.wait_until(lambda: len(departures.left) >= files, 10, "every source to leave the inbox")
        departures.stop()
        latencies, intake_part = [], []
        for name, received in handler.received.items():
            index = fc.index_of(name)
            if index is None or not 0 <= index < files:
                raise RuntimeError(f"an event for a file never renamed: {name}")
            latencies.append((received - renamed[index]) * 1000)
            intake_part.append((departures.left[f"f{index}.pdb"] - renamed[index]) * 1000)
        if len(latencies) != files:
            raise RuntimeError(f"{len(latencies)} distinct files delivered of {files}")
        figures["p50"] = fc.percentile(latencies, 0.50)
        figures["p90"] = fc.percentile(latencies, 0.90)
        figures["p99"] = fc.percentile(latencies, 0.99)
        figures["p999"] = fc.percentile(latencies, 0.999)
        figures["max"] = max(latencies)
        figures["intake_p50"] = fc.percentile(intake_part, 0.50)
        figures["intake_p99"] = fc.percentile(intake_part, 0.99)
        figures["seconds"] = renamed[-1] - start
        if fleet and "--statements" in sys.argv:
            print(f"  PostgreSQL's statements, most often run first ({files} files):")
            for row in run.postgres.statements(files).splitlines():
                print("    " + row)
        if "--series" in sys.argv:
            by_second: dict[int, list[float]] = {}
            for name, received in handler.received.items():
                index = fc.index_of(name)
                by_second.setdefault(int(renamed[index] - start), []).append((received - renamed[index]) * 1000)
            print(f"  {'fleet' if fleet else 'local'}, by the second of the rename: p50 / max ms")
            for second, values in sorted(by_second.items()):
                print(f"    {second:3d} s  {fc.percentile(values, 0.5):8.1f} {max(values):8.1f}")
        return figures


def line(side: str, f: dict) -> str:
    cpu = (f"CPU per file {f['intake_cpu']:.0f} µs" if side == "local" else
           f"CPU per file A {f['intake_cpu']:.0f} + B {f['handler_cpu']:.0f} + PostgreSQL {f['postgres_cpu']:.0f} µs")
    return (f"{side:<5} p50 {f['p50']:.2f}  p90 {f['p90']:.2f}  p99 {f['p99']:.2f}  p99.9 {f['p999']:.2f}  "
            f"max {f['max']:.2f} ms (of which until the source left the inbox: p50 {f['intake_p50']:.2f}, "
            f"p99 {f['intake_p99']:.2f}); {cpu}; renames took {f['seconds']:.2f} s; load {f['load']}")


def main() -> int:
    positional = [a for a in sys.argv[1:] if not a.startswith("--")]
    if not positional or "--help" in sys.argv:
        print(__doc__)
        return 2
    docrouted = os.path.abspath(positional[0])
    rate = fc.option("rate", 200.0, float)
    seconds = fc.option("seconds", 20.0, float)
    rounds = fc.option("rounds", 1, int)
    quiet = fc.option("quiet-load", None, float)
    patience = fc.option("quiet-wait", 600.0, float)
    files = int(rate * seconds)
    print(f"{files} files of 4 KiB at {rate:g}/s, {rounds} round(s); {docrouted}", flush=True)
    local, fleet = [], []
    for number in range(rounds):
        print(f"round {number + 1}: load before {fc.wait_for_quiet(quiet, patience)}", flush=True)
        local.append(measure(docrouted, False, rate, files))
        print("  " + line("local", local[-1]), flush=True)
        fleet.append(measure(docrouted, True, rate, files))
        print("  " + line("fleet", fleet[-1]), flush=True)
    keys = ("p50", "p90", "p99", "p999", "max", "intake_p50", "intake_p99", "intake_cpu", "handler_cpu", "postgres_cpu")
    median = {side: {k: statistics.median(r[k] for r in runs) for k in keys}
              for side, runs in (("local", local), ("fleet", fleet))}
    for side in ("local", "fleet"):
        m = median[side]
        print(f"median of {rounds}, {side}: p50 {m['p50']:.2f}, p90 {m['p90']:.2f}, p99 {m['p99']:.2f}, "
              f"p99.9 {m['p999']:.2f}, max {m['max']:.2f} ms; until the source left the inbox p50 "
              f"{m['intake_p50']:.2f}, p99 {m['intake_p99']:.2f} ms; CPU per file µs: intake host "
              f"{m['intake_cpu']:.0f}, handler's host {m['handler_cpu']:.0f}, PostgreSQL {m['postgres_cpu']:.0f}")
    p99 = median["fleet"]["p99"]
    verdict = "met" if p99 < TARGET_P99_MS else f"MISSED by {p99 - TARGET_P99_MS:.1f} ms ({p99 / TARGET_P99_MS:.1f}×)"
    print(f"summary: fleet latency at {rate:g} files/s, p50/p90/p99/max {median['fleet']['p50']:.1f}/"
          f"{median['fleet']['p90']:.1f}/{p99:.1f}/{median['fleet']['max']:.1f} ms (one host "
          f"{median['local']['p50']:.1f}/{median['local']['p90']:.1f}/{median['local']['p99']:.1f}/"
          f"{median['local']['max']:.1f} ms); target p99 < {TARGET_P99_MS:g} ms {verdict}")
    return 0


if __name__ == "__main__":
    fc.run_main(main, "fleet-latency")
