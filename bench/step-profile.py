#!/usr/bin/env python3
"""Microseconds per file by delivery step, from docrouted's own step timings (its debug log).

Usage: bench/step-profile.py DOCROUTED [FILES] [--no-subscriber] [--size=BYTES] [--callgrind] [--keep]
       (a release build; default 10,000 files of 4 KiB; --size=1073741824 with FILES 1 profiles
       one large file)

With --callgrind the daemon runs under `valgrind --tool=callgrind` (about 50 times slower: use
1,000 files or fewer), and the instructions per file of each step are printed too: the inclusive
count of the functions that do the step (see STEP_FUNCTIONS), over the files delivered. Callgrind
counts instructions, not time, so the figures do not depend on what else the machine runs: use
them to compare two builds. The wall times of a run under callgrind mean nothing. --keep leaves
the temporary tree (the daemon's log, callgrind.out) in place for a closer look, and prints it.

Starts docrouted on a temporary tree beside the build (on the same file system as the project),
subscribes as the handler and acknowledges every document as it comes (unless --no-subscriber),
renames FILES files into its inbox at once, waits until every copy is in the sandbox, every
document is acknowledged and the inbox is empty, stops it, and sums the `<step>=<n>us` timings of
its debug log over the files:

- intake's `batch delivered`: open (opening, typing and choosing the handler of a batch);
- the delivery batch's `delivered a batch`: copy, sync, queued (a prepared batch waiting for the
  one before it to commit: the two overlap, so it is waiting, not work), lookup, stage, place,
  commit, remove;
- the dispatcher's `events sent`: dispatch (the ledger read of what is owed, the openURL lines);
- its `acknowledgements written`: ack (taking acks in, writing them to the ledger).

The steps' wall times overlap (two batches at once, dispatch beside the next copy), so their sum
is more than the elapsed time per file. The issue's grouping is printed second: open and type,
copy, sync, rename (place), ledger (lookup + stage + commit), source (remove), dispatch, ack.
"""
import collections
import os
import re
import shutil
import socket
import subprocess
import threading
import sys
import tempfile
import time

HANDLER = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0"><dict>
<key>CFBundleIdentifier</key><string>org.example.everything</string>
<key>CFBundleDocumentTypes</key><array><dict>
<key>LSItemContentTypes</key><array><string>public.data</string><string>public.text</string><string>com.sunsetlakesoftware.molecules.pdb</string></array>
<key>CFBundleTypeRole</key><string>Viewer</string></dict></array>
</dict></plist>
"""


# The synchronous functions whose inclusive instruction counts make up each step (demangled Swift
# names, matched at their start, "specialized" and closures around them left out). Async functions
# are not used: a suspended async function's inclusive count takes in whatever its thread ran after
# the switch. Rows starting with "  of which" are part of the row above and not added to the sum.
STEP_FUNCTIONS = [
    ("intake: type", ["TypeEngine.classify("]),
    ("intake: handler choice", ["HandlerSelector.chooseHandler("]),
    ("copy", ["SandboxWriter.copyToTemporary("]),
    ("  of which SHA-256", ["SHA256.update(bufferPointer:)"]),
    ("flush", ["DeliveryBatch.syncData("]),
    ("ledger: earlier-delivery lookup", ["DeliveryLedger.deliveredRecords("]),
    ("ledger: stage", ["DeliveryLedger.stage("]),
    ("rename into place", ["DeliveryBatch.place("]),
    ("ledger: commit", ["DeliveryLedger.commit("]),
    ("source taken aside", ["DeliveryBatch.removeSources("]),
    ("  of which ledger noted", ["DeliveryLedger.markSourcesRemoved("]),
    ("reclaim", ["SourceReclaimer.reclaim("]),
    ("ledger: owed read", ["DeliveryLedger.pendingEvents("]),
    ("ledger: acknowledgements", ["closure #2 in DeliveryLedger.acknowledge("]),
    ("log lines", ["ConsoleLogHandler.log(event:)", "JournalLogHandler.log(event:)"]),
    ("activity counters", ["DaemonActivity.record("]),
]


def callgrind_steps(output: str, files: int) -> None:
    """Prints instructions per file: the whole daemon, and the inclusive count of each step's functions."""
    annotated = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", output],
                               capture_output=True, text=True).stdout
    demangled = subprocess.run(["swift", "demangle", "--simplified"], input=annotated, capture_output=True, text=True).stdout
    total = 0
    inclusive: dict[str, int] = collections.defaultdict(int)
    for line in demangled.splitlines():
        found = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+\S*?:(.*)", line)
        if not found:
            if "PROGRAM TOTALS" in line:
                total = int(line.split()[0].replace(",", ""))
            continue
        count = int(found.group(1).replace(",", ""))
        name = found.group(2).removeprefix("specialized ").removeprefix("static ")
        if "'" in name.split(" [")[0]:
            continue  # a recursion cycle's second entry
        for step, patterns in STEP_FUNCTIONS:
            if any(name.startswith(pattern) for pattern in patterns):
                inclusive[step] = max(inclusive[step], count)
    print(f"callgrind: {total / files:,.0f} instructions per file in the whole daemon, from the first rename to the last acknowledgement")
    print(f"| step | instructions per file |")
    print(f"|---|---|")
    counted = 0
    for step, _ in STEP_FUNCTIONS:
        if not step.startswith("  "):
            counted += inclusive.get(step, 0)
        print(f"| {step.strip()} | {inclusive.get(step, 0) / files:,.0f} |")
    print(f"| the rest (async runtime, event loop, socket lines, thread hand-offs) | {(total - counted) / files:,.0f} |")
    print(f"| all | {total / files:,.0f} |")


class Subscriber(threading.Thread):
    """A handler that acknowledges every document it is sent, at once."""

    def __init__(self, path: str):
        super().__init__(daemon=True)
        self.connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.connection.connect(path)
        self.connection.sendall(b'{"type":"subscribe","id":"1","bundleIdentifier":"org.example.everything"}\n')
        self.acknowledged = 0

    def run(self) -> None:
        pending = b""
        while True:
            try:
                chunk = self.connection.recv(1 << 16)
            except OSError:
                return
            if not chunk:
                return
            pending += chunk
            *lines, pending = pending.split(b"\n")
            acks = []
            for line in lines:
                found = re.search(rb'"deliveryID":"([^"]+)"', line)
                if found:
                    acks.append(b'{"type":"ack","deliveryID":"' + found.group(1) + b'","handled":true}\n')
            if acks:
                self.connection.sendall(b"".join(acks))
                self.acknowledged += len(acks)


def main() -> int:
    arguments = [argument for argument in sys.argv[1:] if not argument.startswith("--")]
    subscribe = "--no-subscriber" not in sys.argv
    docrouted = arguments[0]
    files = int(arguments[1]) if len(arguments) > 1 else 10_000
    size = next((int(argument.split("=", 1)[1]) for argument in sys.argv if argument.startswith("--size=")), 4096)
    root = tempfile.mkdtemp(prefix="step-profile-", dir=os.path.join(os.getcwd(), ".build"))
    try:
        for folder in ("inbox", "stage", "handlers", "containers", "state", "quarantine"):
            os.makedirs(os.path.join(root, folder))
        with open(os.path.join(root, "handlers/everything.plist"), "w") as f:
            f.write(HANDLER)
        with open(os.path.join(root, "docroute.toml"), "w") as f:
            f.write(f'socket = "{root}/s.sock"\nstate_directory = "{root}/state"\n'
                    f'containers_directory = "{root}/containers"\nhandlers_directory = "{root}/handlers"\n'
                    f'quarantine_directory = "{root}/quarantine"\n'
                    f'[[inbox]]\npath = "{root}/inbox"\nkind = "directory"\ndefault_mailbox = "Inbox"\n')
        chunk = b"HEADER\n" + b" " * (min(size, 1 << 20) - 7)
        for index in range(files):
            with open(os.path.join(root, "stage", f"f{index}.pdb"), "wb") as f:
                left = size
                while left > 0:
                    f.write(chunk[:left])
                    left -= len(chunk[:left])
        os.sync()
        log = open(os.path.join(root, "log"), "w")
        callgrind = os.path.join(root, "callgrind.out") if "--callgrind" in sys.argv else None
        # Under callgrind the daemon logs at `warning`, as `docroute-bench compare` runs it, so the
        # counts are those of the benchmark's CPU figures (at `debug`, formatting the log lines was
        # 8% of the count); the step timings need `debug` and are not printed then.
        level = "warning" if callgrind else "debug"
        command = [docrouted, "--config", os.path.join(root, "docroute.toml"), "--log-level", level]
        if callgrind:
            # Valgrind 3.19 (Debian 12) gives up on the DWARF 5 that Swift's toolchain writes; the
            # symbol table is enough for function names, so it runs a copy without debug sections.
            stripped = os.path.join(root, "docrouted")
            subprocess.run(["objcopy", "--strip-debug", docrouted, stripped], check=True)
            command[0] = stripped
            # Counting starts with the burst and stops when every copy is acknowledged, so start-up
            # (loading the type database and the manifests) and shut-down are not in the figures.
            command = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
                       f"--callgrind-out-file={callgrind}"] + command
        daemon = subprocess.Popen(command, stdout=log, stderr=log)
        while not os.path.exists(os.path.join(root, "s.sock")):
            time.sleep(0.05)
        subscriber = Subscriber(os.path.join(root, "s.sock")) if subscribe else None
        if subscriber:
            subscriber.start()
        if callgrind:
            subprocess.run(["callgrind_control", "--instr=on", str(daemon.pid)], check=True, capture_output=True)
        start = time.monotonic()
        for index in range(files):
            os.rename(os.path.join(root, "stage", f"f{index}.pdb"), os.path.join(root, "inbox", f"f{index}.pdb"))
        sandbox = os.path.join(root, "containers/org.example.everything/Documents/Inbox/Inbox")
        while not (os.path.isdir(sandbox) and len(os.listdir(sandbox)) >= files and not os.listdir(os.path.join(root, "inbox"))):
            time.sleep(0.02)
        seconds = time.monotonic() - start
        if subscriber:
            while subscriber.acknowledged < files:
                time.sleep(0.005)
            acknowledged = time.monotonic() - start
            # The last acknowledgements are written in the background: give them their log line.
            time.sleep(1 if not callgrind else 10)
        if callgrind:
            subprocess.run(["callgrind_control", "--instr=off", str(daemon.pid)], check=True, capture_output=True)
        daemon.terminate()
        daemon.wait()
        log.close()
        totals: dict[str, int] = {}
        delivered = 0
        for line in open(os.path.join(root, "log")):
            if "delivered a batch" in line:
                count = re.search(r"files[=:] ?(\d+)", line)
                delivered += int(count.group(1)) if count else 0
            elif not any(tag in line for tag in ("batch delivered", "events sent", "acknowledgements written")):
                continue
            for name, micros in re.findall(r"(\w+)=(\d+)us", line):
                totals[name] = totals.get(name, 0) + int(micros)
        print(f"{files} files of {size:,} bytes, {seconds:.2f} s until all were in the sandbox "
              f"({files / seconds:,.0f} files/s)" + ("" if callgrind else f"; {delivered} in batches with step timings"))
        if subscriber:
            print(f"all acknowledged after {acknowledged:.2f} s ({files / acknowledged:,.0f} files/s)")
        if callgrind:
            callgrind_steps(callgrind, files)
            return 0
        print(f"{'step':<8} {'us/file':>8}")
        for name, micros in totals.items():
            print(f"{name:<8} {micros / max(delivered, 1):8.1f}")
        print(f"{'all':<8} {sum(totals.values()) / max(delivered, 1):8.1f}   (steps overlap: copy runs beside the previous commit, dispatch beside both)")
        groups = [("open and type", ["open"]), ("copy", ["copy"]), ("sync", ["sync"]), ("rename", ["place"]),
                  ("ledger", ["lookup", "stage", "commit"]), ("source", ["remove"]), ("dispatch", ["dispatch"]), ("ack", ["ack"])]
        print("| " + " | ".join(name for name, _ in groups) + " |")
        print("|" + "---|" * len(groups))
        print("| " + " | ".join(f"{sum(totals.get(step, 0) for step in steps) / max(delivered, 1):.1f}" for _, steps in groups) + " |")
        return 0
    finally:
        if "--keep" in sys.argv:
            print(f"kept: {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
