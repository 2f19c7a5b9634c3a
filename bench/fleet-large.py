#!/usr/bin/env python3
"""One large file through the fleet against PostgreSQL's own `\\lo_import` of it, and the hosts' peak memory.

usage: bench/fleet-large.py <docrouted> [--size-mib=1024] [--rounds=3]
                            [--quiet-load=L] [--quiet-wait=S] [--log-level=LEVEL] [--keep]
       (root: PostgreSQL runs as the postgres user; apt-get install postgresql)

Each round, on this machine: a PostgreSQL 15 of its own (Debian's, Unix socket, trust, fsync on),
host A with nobody subscribed (intake only) and host B with a handler subscribed (acknowledging
at once); the file (SIZE MiB) is written twice beside them and synced, so both sides read it from
the page cache. The two sides, in alternating order from round to round, each after a CHECKPOINT:
- fleet: the time from renaming one copy into A's inbox until the handler on B has acknowledged
  it (B sends `openURL` once the copy is whole and durable in its sandbox; its size is checked);
- lo_import: `psql -c "\\lo_import FILE"` of the other copy into the same database (one
  transaction, committed with fsync on: the bytes as PostgreSQL itself stores a large file).
Printed per round: both times and rates, the fleet's rate against lo_import's (target ≥ 0.5×),
CPU of A, B and PostgreSQL's processes during the fleet side (and of PostgreSQL and psql during
lo_import), and A's and B's peak resident memory (VmHWM in /proc: target under 64 MiB, over the
whole life of the process); then the medians and a one-line summary. --quiet-load=L waits before
each round (up to --quiet-wait seconds, default 600) for the 1-minute load to fall under L.
Needs 2 × SIZE free beside the build, plus as much again in PostgreSQL's folder. Exits 1 on a
failure (file not delivered whole, psql failing); a missed target is printed, not an error.
Everything started is stopped by pid and its folder removed (--keep keeps it, with the
daemons' logs; --log-level=debug makes them say more).
"""
import os
import resource
import statistics
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ left in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleet_common as fc  # noqa: E402

TARGET_RATIO = 0.5
TARGET_PEAK_MIB = 64.0


def write_file(path: str, size: int) -> None:
    block = b"HEADER\n" + bytes(range(256)) * 4096
    block = block[:1 << 20]
    with open(path, "wb") as f:
        left = size
        while left > 0:
            left -= f.write(block[:min(left, len(block))])
    os.chmod(path, 0o644)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def fleet_side(run: fc.Run, intake: fc.Host, target: fc.Host, handler: fc.Handler, size: int) -> dict:
    for host in (intake, target):
        host.mark()
    postgres_before = run.postgres.cpu()
    load_before = fc.load()
    start = time.monotonic()
    os.rename(os.path.join(intake.stage, "f0.pdb"), os.path.join(intake.inbox, "f0.pdb"))
    fc.wait_until(lambda: handler.acknowledged >= 1, 900, "the acknowledgement of the large file", 0.002)
    seconds = handler.last_ack - start
    copy = os.path.join(target.sandbox, "f0.pdb")
    if not os.path.exists(copy) or os.path.getsize(copy) != size:
        raise RuntimeError(f"the copy in B's sandbox is not whole: {copy}")
    return {"seconds": seconds, "a_cpu": intake.cpu_since_mark(), "b_cpu": target.cpu_since_mark(),
            "postgres_cpu": run.postgres.cpu() - postgres_before, "load": f"{load_before} → {fc.load()}"}


def lo_import_side(run: fc.Run, path: str) -> dict:
    postgres = run.postgres
    postgres_before = postgres.cpu()
    psql_before = children_cpu()
    load_before = fc.load()
    start = time.monotonic()
    output = postgres.psql(f"\\lo_import {path}", quiet=False)  # quiet would hide the oid
    seconds = time.monotonic() - start
    postgres_cpu = postgres.cpu() - postgres_before
    psql_cpu = children_cpu() - psql_before
    oid = output.split()[-1] if output.split() else ""
    if not output.startswith("lo_import") or not oid.isdigit():
        raise RuntimeError(f"\\lo_import said: {output!r}")
    size = int(postgres.psql(f"SELECT sum(length(data)) FROM pg_largeobject WHERE loid = {oid}"))
    postgres.psql(f"SELECT lo_unlink({oid})")
    return {"seconds": seconds, "size": size, "postgres_cpu": postgres_cpu, "psql_cpu": psql_cpu,
            "load": f"{load_before} → {fc.load()}"}


def measure(docrouted: str, size: int, fleet_first: bool) -> dict:
    with fc.Run(docrouted, "fleet-large-") as run:
        run.start_postgres()
        intake = run.host("a", True)
        target = run.host("b", True)
        spare = os.path.join(run.root, "lo")
        os.makedirs(spare, mode=0o755)
        write_file(os.path.join(intake.stage, "f0.pdb"), size)
        write_file(os.path.join(spare, "f0.pdb"), size)
        os.sync()
        handler = run.handler(target)
        time.sleep(2)  # the hosts register and listen
        figures = {}
        for side in (("fleet", "lo_import") if fleet_first else ("lo_import", "fleet")):
            run.postgres.psql("CHECKPOINT")
            if side == "fleet":
                figures["fleet"] = fleet_side(run, intake, target, handler, size)
            else:
                figures["lo_import"] = lo_import_side(run, os.path.join(spare, "f0.pdb"))
                if figures["lo_import"]["size"] != size:
                    raise RuntimeError(f"lo_import stored {figures['lo_import']['size']} bytes of {size}")
        figures["a_peak"] = intake.peak_mib()
        figures["b_peak"] = target.peak_mib()
        return figures


def main() -> int:
    positional = [a for a in sys.argv[1:] if not a.startswith("--")]
    if not positional or "--help" in sys.argv:
        print(__doc__)
        return 2
    docrouted = os.path.abspath(positional[0])
    mib = fc.option("size-mib", 1024, int)
    rounds = fc.option("rounds", 3, int)
    quiet = fc.option("quiet-load", None, float)
    patience = fc.option("quiet-wait", 600.0, float)
    size = mib << 20
    print(f"one file of {mib} MiB, {rounds} round(s); {docrouted}", flush=True)
    results = []
    for number in range(rounds):
        load = fc.wait_for_quiet(quiet, patience)
        r = measure(docrouted, size, number % 2 == 0)
        results.append(r)
        f, l = r["fleet"], r["lo_import"]
        print(f"round {number + 1} ({'fleet' if number % 2 == 0 else 'lo_import'} first; load before {load}):\n"
              f"  fleet {f['seconds']:.2f} s ({mib / f['seconds']:.0f} MiB/s): CPU A {f['a_cpu']:.2f} + B {f['b_cpu']:.2f} "
              f"+ PostgreSQL {f['postgres_cpu']:.2f} s; load {f['load']}\n"
              f"  lo_import {l['seconds']:.2f} s ({mib / l['seconds']:.0f} MiB/s): CPU PostgreSQL {l['postgres_cpu']:.2f} "
              f"+ psql {l['psql_cpu']:.2f} s; load {l['load']}\n"
              f"  fleet / lo_import {l['seconds'] / f['seconds']:.2f}×; peak resident A {r['a_peak']:.1f} MiB, "
              f"B {r['b_peak']:.1f} MiB", flush=True)
    fleet = statistics.median(r["fleet"]["seconds"] for r in results)
    lo = statistics.median(r["lo_import"]["seconds"] for r in results)
    ratios = [r["lo_import"]["seconds"] / r["fleet"]["seconds"] for r in results]
    ratio = statistics.median(ratios)
    a_peak = max(r["a_peak"] for r in results)
    b_peak = max(r["b_peak"] for r in results)
    print(f"median of {rounds}: fleet {fleet:.2f} s ({mib / fleet:.0f} MiB/s), lo_import {lo:.2f} s "
          f"({mib / lo:.0f} MiB/s); fleet / lo_import per round "
          f"{', '.join(f'{value:.2f}' for value in ratios)} (median {ratio:.2f}); "
          f"peak resident, highest of the rounds: A {a_peak:.1f} MiB, B {b_peak:.1f} MiB")
    verdicts = [f"rate ≥ {TARGET_RATIO}× " + ("met" if ratio >= TARGET_RATIO else f"MISSED ({ratio:.2f}×)"),
                f"peak < {TARGET_PEAK_MIB:g} MiB " + ("met" if max(a_peak, b_peak) < TARGET_PEAK_MIB
                                                      else f"MISSED by {max(a_peak, b_peak) - TARGET_PEAK_MIB:.1f} MiB")]
    print(f"summary: {mib} MiB through the fleet {fleet:.2f} s against lo_import {lo:.2f} s, {ratio:.2f}×; "
          f"peak A {a_peak:.1f} / B {b_peak:.1f} MiB; targets: {'; '.join(verdicts)}")
    return 0


if __name__ == "__main__":
    fc.run_main(main, "fleet-large")
