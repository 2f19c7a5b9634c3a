#!/usr/bin/env python3
"""Peak memory of docrouted over a burst, and what it is made of, for trying configuration changes.

Usage: bench/burst-memory.py DOCROUTED [FILES] ["CONFIGURATION LINE"] [--by-kind]
       (a release build; default 100,000 files of 4 KiB; e.g. "max_queued_files = 4096")

Starts docrouted on a temporary tree beside the build (as bench/step-profile.py does, with the
line added to its configuration), subscribes and acknowledges every document, renames FILES files
into its inbox at once, and reads /proc/PID/smaps_rollup every 50 ms until all are acknowledged.
Prints the rate, the daemon's user and system CPU per file, VmHWM, the largest reading split into
anonymous memory and file pages, and the daemon's threads then and at most; with --by-kind, the
anonymous memory of that reading by kind of mapping (heap, thread arenas, thread stacks), from
/proc/PID/smaps.
`docroute-bench compare` gives the same figures beside its baselines; this is the short form.
"""
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("step_profile", os.path.join(here, "step-profile.py"))
step_profile = importlib.util.module_from_spec(spec)
spec.loader.exec_module(step_profile)


def reading(pid: int) -> tuple[int, int]:
    text = open(f"/proc/{pid}/smaps_rollup").read()
    return int(re.search(r"^Rss:\s+(\d+)", text, re.M).group(1)), int(re.search(r"^Anonymous:\s+(\d+)", text, re.M).group(1))


def anonymous_by_kind(pid: int) -> dict[str, int]:
    """Resident KiB of the anonymous memory by kind of mapping: the heap, malloc's thread arenas
    (read-write mappings inside a 64 MiB-aligned reservation), thread stacks (8 MiB), named
    mappings (a binary's data) by name, and the rest; and the file pages of each file mapped."""
    kinds: dict[str, int] = {}
    start = size = rss = 0
    name = ""
    for line in open(f"/proc/{pid}/smaps"):
        header = re.match(r"([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \d+\s*(.*)", line)
        if header:
            start = int(header.group(1), 16)
            size = (int(header.group(2), 16) - start) // 1024
            name = header.group(3).strip()
            continue
        resident = re.match(r"Rss:\s+(\d+)", line)
        if resident:
            rss = int(resident.group(1))
            continue
        found = re.match(r"Anonymous:\s+(\d+)", line)
        if found and name.startswith("/") and rss - int(found.group(1)) > 0:
            key = "file pages: " + os.path.basename(name)
            kinds[key] = kinds.get(key, 0) + rss - int(found.group(1))
        if found and int(found.group(1)):
            if name == "[heap]":
                kind = "heap"
            elif name:
                kind = os.path.basename(name)
            elif 8 * 1024 <= size <= 8 * 1024 + 8:
                kind = "thread stacks"
            elif start % (64 << 20) == 0 and size <= 64 * 1024:
                kind = "thread arenas"
            else:
                kind = f"other ({size // 1024} MiB mappings)" if size >= 1024 else "other (small mappings)"
            kinds[kind] = kinds.get(kind, 0) + int(found.group(1))
    return kinds


def main() -> int:
    positional = [argument for argument in sys.argv[1:] if not argument.startswith("--")]
    docrouted = positional[0]
    files = int(positional[1]) if len(positional) > 1 else 100_000
    extra = positional[2] if len(positional) > 2 else ""
    root = tempfile.mkdtemp(prefix="burst-memory-", dir=os.path.join(os.getcwd(), ".build"))
    try:
        for folder in ("inbox", "stage", "handlers", "containers", "state", "quarantine"):
            os.makedirs(os.path.join(root, folder))
        with open(os.path.join(root, "handlers/everything.plist"), "w") as f:
            f.write(step_profile.HANDLER)
        with open(os.path.join(root, "docroute.toml"), "w") as f:
            f.write(f'socket = "{root}/s.sock"\nstate_directory = "{root}/state"\n'
                    f'containers_directory = "{root}/containers"\nhandlers_directory = "{root}/handlers"\n'
                    f'quarantine_directory = "{root}/quarantine"\nmax_unacknowledged = 256\n{extra}\n'
                    f'[[inbox]]\npath = "{root}/inbox"\nkind = "directory"\ndefault_mailbox = "Inbox"\n')
        body = b"HEADER\n" + b" " * 4089
        for index in range(files):
            with open(os.path.join(root, "stage", f"f{index}.pdb"), "wb") as f:
                f.write(body)
        os.sync()
        daemon = subprocess.Popen([docrouted, "--config", os.path.join(root, "docroute.toml"), "--log-level", "warning"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while not os.path.exists(os.path.join(root, "s.sock")):
            time.sleep(0.05)
        subscriber = step_profile.Subscriber(os.path.join(root, "s.sock"))
        subscriber.start()
        peak = [0, 0]
        threads = [0, 0]
        kinds: dict[str, int] = {}
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                resident, anonymous = reading(daemon.pid)
                count = len(os.listdir(f"/proc/{daemon.pid}/task"))
                threads[1] = max(threads[1], count)
                if resident > peak[0]:
                    peak[:] = [resident, anonymous]
                    threads[0] = count
                    if "--by-kind" in sys.argv:
                        kinds.clear()
                        kinds.update(anonymous_by_kind(daemon.pid))
                time.sleep(0.05)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        start = time.monotonic()
        for index in range(files):
            os.rename(os.path.join(root, "stage", f"f{index}.pdb"), os.path.join(root, "inbox", f"f{index}.pdb"))
        while subscriber.acknowledged < files:
            time.sleep(0.02)
        seconds = time.monotonic() - start
        done.set()
        sampler.join()
        hwm = next(int(line.split()[1]) for line in open(f"/proc/{daemon.pid}/status") if line.startswith("VmHWM"))
        # utime and stime, fields 14 and 15 of /proc/PID/stat (after the command's parenthesis).
        fields = open(f"/proc/{daemon.pid}/stat").read().rsplit(")", 1)[1].split()
        ticks = os.sysconf("SC_CLK_TCK")
        user, system = int(fields[11]) / ticks, int(fields[12]) / ticks
        daemon.terminate()
        daemon.wait()
        print(f"{extra or 'defaults'}: {files:,} files, {files / seconds:,.0f} files/s until acknowledged; "
              f"VmHWM {hwm / 1024:.1f} MiB; largest reading {peak[0] / 1024:.1f} MiB: "
              f"anonymous {peak[1] / 1024:.1f}, file pages {(peak[0] - peak[1]) / 1024:.1f} MiB; "
              f"{threads[0]} threads then, {threads[1]} at most; CPU per file (start-up included): "
              f"user {user / files * 1e6:.0f} µs, system {system / files * 1e6:.0f} µs")
        if kinds:
            print("at that reading: " + ", ".join(f"{kind} {kib / 1024:.1f} MiB" for kind, kib in
                                                          sorted(kinds.items(), key=lambda item: -item[1]) if kib >= 64))
        return 0
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
