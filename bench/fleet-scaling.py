#!/usr/bin/env python3
"""Scaling the fleet out: one handler's instances on 1, 2 and 4 hosts, each spending time per document.

usage: bench/fleet-scaling.py <docrouted> [FILES] [--instances=1,2,4] [--work-ms=20] [--rounds=1]
                              [--quiet-load=L] [--quiet-wait=S] [--log-level=LEVEL] [--keep]
       (root: PostgreSQL runs as the postgres user; apt-get install postgresql)

For each instance count N (and each round), on this machine: a PostgreSQL 15 of its own (Debian's,
Unix socket, trust, fsync on), host A with nobody subscribed (intake only) and hosts B1..BN, each
with the same handler subscribed once. The handler takes its documents one at a time and spends
WORK ms on each (a sleep, before its ack: a handler whose work is elsewhere, not CPU on this
machine). FILES files of 4 KiB (default 2,000) are renamed into A's inbox at once; the rate is
FILES over the time from the first rename until the instances together have acknowledged every
one. Linear is N × the 1-instance rate of the same round; the target is at least 80% of it.
One instance's ceiling is 1000 / WORK documents per second. Printed: each run's rate, the share
each instance handled, CPU per file (user + system of A, of the B hosts together and of
PostgreSQL's processes), the load average; then medians over the rounds and a one-line summary.
--quiet-load=L waits before each run (up to --quiet-wait seconds, default 600) for the 1-minute
load to fall under L. Exits 1 on a failure (a document not acknowledged in time, a process that
did not start); a missed target is printed, not an error. Everything started is stopped by pid
and its folder removed (--keep keeps the folder with the daemons' logs; --log-level=debug makes them say more).
"""
import os
import statistics
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ left in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleet_common as fc  # noqa: E402

TARGET = 0.8


def measure(docrouted: str, instances: int, files: int, work: float) -> dict:
    with fc.Run(docrouted, "fleet-scaling-") as run:
        run.start_postgres()
        intake = run.host("a", True)
        hosts = [run.host(f"b{index + 1}", True) for index in range(instances)]
        fc.write_files(intake.stage, files)
        handlers = [run.handler(host, work) for host in hosts]
        time.sleep(2)  # the hosts register and listen
        for host in run.hosts:
            host.mark()
        postgres_before = run.postgres.cpu()
        load_before = fc.load()
        start = time.monotonic()
        for index in range(files):
            os.rename(os.path.join(intake.stage, f"f{index}.pdb"), os.path.join(intake.inbox, f"f{index}.pdb"))
        ceiling = instances / (work or 0.001)
        fc.wait_until(lambda: sum(h.acknowledged for h in handlers) >= files, 120 + 3 * files / ceiling,
                      f"{files} acknowledgements (have {sum(h.acknowledged for h in handlers)})", 0.005)
        seconds = max(h.last_ack for h in handlers) - start
        delivered = set()
        for handler in handlers:
            delivered.update(handler.received)
        if len(delivered) != files:
            raise RuntimeError(f"{len(delivered)} distinct files delivered of {files}")
        return {
            "rate": files / seconds,
            "seconds": seconds,
            "shares": [h.acknowledged for h in handlers],
            "intake_cpu": intake.cpu_since_mark() / files * 1e6,
            "handler_cpu": sum(host.cpu_since_mark() for host in hosts) / files * 1e6,
            "postgres_cpu": (run.postgres.cpu() - postgres_before) / files * 1e6,
            "load": f"{load_before} → {fc.load()}",
        }


def main() -> int:
    positional = [a for a in sys.argv[1:] if not a.startswith("--")]
    if not positional or "--help" in sys.argv:
        print(__doc__)
        return 2
    docrouted = os.path.abspath(positional[0])
    files = int(positional[1]) if len(positional) > 1 else 2_000
    counts = [int(n) for n in fc.option("instances", "1,2,4").split(",")]
    work = fc.option("work-ms", 20.0, float) / 1000
    rounds = fc.option("rounds", 1, int)
    quiet = fc.option("quiet-load", None, float)
    patience = fc.option("quiet-wait", 600.0, float)
    if counts[0] != 1:
        counts = [1] + [n for n in counts if n != 1]  # linear is measured against one instance
    print(f"{files} files of 4 KiB, handler work {work * 1000:g} ms per document, instances {counts}, "
          f"{rounds} round(s); {docrouted}", flush=True)
    results: dict[int, list[dict]] = {n: [] for n in counts}
    for number in range(rounds):
        for n in counts:
            fc.wait_for_quiet(quiet, patience)
            figures = measure(docrouted, n, files, work)
            results[n].append(figures)
            linear = n * results[1][-1]["rate"]
            print(f"round {number + 1}, {n} instance(s): {figures['rate']:.1f} files/s in {figures['seconds']:.1f} s, "
                  f"{figures['rate'] / linear:.0%} of linear ({linear:.1f}); handled {figures['shares']}; "
                  f"CPU per file A {figures['intake_cpu']:.0f} + B hosts {figures['handler_cpu']:.0f} + PostgreSQL "
                  f"{figures['postgres_cpu']:.0f} µs; load {figures['load']}", flush=True)
    one = statistics.median(r["rate"] for r in results[1])
    parts = []
    worst = 1.0
    for n in counts:
        rate = statistics.median(r["rate"] for r in results[n])
        share = statistics.median(r["rate"] / (n * one_round["rate"]) for r, one_round in zip(results[n], results[1]))
        worst = min(worst, share)
        cpu = statistics.median(r["intake_cpu"] + r["handler_cpu"] + r["postgres_cpu"] for r in results[n])
        print(f"median of {rounds}, {n} instance(s): {rate:.1f} files/s, {share:.0%} of linear "
              f"({n} × {one:.1f}); CPU per file, all processes: {cpu:.0f} µs")
        parts.append(f"{n}: {rate:.1f}/s ({share:.0%})")
    verdict = "met" if worst >= TARGET else f"MISSED: worst {worst:.0%}, {TARGET - worst:.0%} short"
    print(f"summary: fleet scaling, {work * 1000:g} ms per document, files/s (share of linear) {'; '.join(parts)}; "
          f"target ≥ {TARGET:.0%} of linear {verdict}")
    return 0


if __name__ == "__main__":
    fc.run_main(main, "fleet-scaling")
