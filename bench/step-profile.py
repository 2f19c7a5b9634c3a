#!/usr/bin/env python3
"""Microseconds per file by delivery step, from docrouted's own step timings (its debug log).

Usage: bench/step-profile.py DOCROUTED [FILES] [--no-subscriber] [--size=BYTES] [--callgrind]
       (a release build; default 10,000 files of 4 KiB; --size=1073741824 with FILES 1 profiles
       one large file)

With --callgrind the daemon runs under `valgrind --tool=callgrind` (about 50 times slower: use
1,000 files or fewer), and the instructions per file of each step are printed too: the inclusive
count of the functions that do the step (see STEP_FUNCTIONS), over the files delivered. Callgrind
counts instructions, not time, so the figures do not depend on what else the machine runs: use
them to compare two builds. The wall times of a run under callgrind mean nothing.

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


# The functions whose inclusive instruction counts make up each step (demangled Swift names, matched
# as substrings; the first match on a call path counts, so nested matches are not counted twice).
STEP_FUNCTIONS = [
    ("intake read and type", ["IntakePipeline.open", "IntakeFile.open", "RoutingSnapshot.type", "TypeEngine."]),
    ("route", ["HandlerSelector.", "RoutingSnapshot.select", "RoutingSnapshot.route"]),
    ("ledger: lookup", ["DeliveryLedger.deliveredRecords"]),
    ("ledger: stage", ["DeliveryLedger.stage"]),
    ("ledger: commit", ["DeliveryLedger.commit"]),
    ("ledger: source noted", ["DeliveryLedger.markSourcesRemoved"]),
    ("ledger: owed read", ["DeliveryLedger.owed", "DeliveryLedger.pendingEvents"]),
    ("ledger: ack", ["DeliveryLedger.acknowledge"]),
    ("copy", ["SandboxWriter.copyToTemporary"]),
    ("flush", ["DeliveryBatch.syncData"]),
    ("rename", ["DeliveryBatch.place"]),
    ("notify", ["HandlerDispatcher.send", "HandlerDispatcher.dispatch"]),
    ("reclaim", ["SourceRemoval.run", "SourceReclaimer.reclaim", "SourceReclaimer.run"]),
]


def callgrind_steps(output: str, files: int) -> None:
    """Prints instructions per file: the whole daemon, and the inclusive count of each step's functions."""
    annotated = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", output],
                               capture_output=True, text=True).stdout
    demangled = subprocess.run(["swift", "demangle", "--simplified"], input=annotated, capture_output=True, text=True).stdout
    total = 0
    inclusive: dict[str, int] = collections.defaultdict(int)
    for line in demangled.splitlines():
        found = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)", line)
        if not found:
            continue
        count = int(found.group(1).replace(",", ""))
        name = found.group(2)
        if "PROGRAM TOTALS" in name:
            total = count
            continue
        # The innermost matching entry of a step is the function itself; keep the largest (the outermost call).
        for step, patterns in STEP_FUNCTIONS:
            if any(pattern in name for pattern in patterns):
                inclusive[step] = max(inclusive[step], count)
                break
    print(f"callgrind: {total / files:,.0f} instructions per file in the whole daemon (start and stop included)")
    print(f"{'step':<24} {'instructions/file':>18}")
    for step, _ in STEP_FUNCTIONS:
        print(f"{step:<24} {inclusive.get(step, 0) / files:18,.0f}")


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
        command = [docrouted, "--config", os.path.join(root, "docroute.toml"), "--log-level", "debug"]
        if callgrind:
            command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={callgrind}"] + command
        daemon = subprocess.Popen(command, stdout=log, stderr=log)
        while not os.path.exists(os.path.join(root, "s.sock")):
            time.sleep(0.05)
        subscriber = Subscriber(os.path.join(root, "s.sock")) if subscribe else None
        if subscriber:
            subscriber.start()
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
            time.sleep(1)
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
              f"({files / seconds:,.0f} files/s); {delivered} in batches with step timings")
        if subscriber:
            print(f"all acknowledged after {acknowledged:.2f} s ({files / acknowledged:,.0f} files/s)")
        print(f"{'step':<8} {'us/file':>8}")
        for name, micros in totals.items():
            print(f"{name:<8} {micros / max(delivered, 1):8.1f}")
        print(f"{'all':<8} {sum(totals.values()) / max(delivered, 1):8.1f}   (steps overlap: copy runs beside the previous commit, dispatch beside both)")
        groups = [("open and type", ["open"]), ("copy", ["copy"]), ("sync", ["sync"]), ("rename", ["place"]),
                  ("ledger", ["lookup", "stage", "commit"]), ("source", ["remove"]), ("dispatch", ["dispatch"]), ("ack", ["ack"])]
        print("| " + " | ".join(name for name, _ in groups) + " |")
        print("|" + "---|" * len(groups))
        print("| " + " | ".join(f"{sum(totals.get(step, 0) for step in steps) / max(delivered, 1):.1f}" for _, steps in groups) + " |")
        if callgrind:
            callgrind_steps(callgrind, files)
        return 0
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
