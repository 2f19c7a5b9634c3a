#!/usr/bin/env python3
"""Which parts of the docrouted binary are resident: MiB per ELF section, after start and after a burst.

usage: bench/resident-sections.py <docrouted> [FILES]     (root: reads /proc/PID/pagemap)

Starts docrouted on a temporary tree beside the build (as bench/burst-memory.py does), waits a
second, and reads which pages of the binary's mappings are present (bit 63 of each pagemap entry);
each page is named by the section whose addresses hold it (`readelf -S`). With FILES, a handler
subscribes and FILES × 4 KiB go through before the reading. A file page counts in the daemon's
resident memory from the moment it is mapped until the kernel reclaims it, whether or not it is
used again: relocations read once at start stay resident as long as code run every second.
"""
import collections
import importlib.util
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("step_profile", os.path.join(here, "step-profile.py"))
step_profile = importlib.util.module_from_spec(spec)
spec.loader.exec_module(step_profile)


def sections(binary: str) -> list[tuple[str, int, int]]:
    found = []
    for line in subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True, check=True).stdout.splitlines():
        match = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", line)
        if match and int(match.group(2), 16):
            found.append((match.group(1), int(match.group(2), 16), int(match.group(3), 16)))
    return found


def resident(pid: int, binary: str) -> tuple[collections.Counter, collections.Counter]:
    table = sections(binary)
    mappings = [line.split() for line in open(f"/proc/{pid}/maps") if line.rstrip().endswith(binary)]
    bias = int(mappings[0][0].split("-")[0], 16) - int(mappings[0][2], 16)
    present, total = collections.Counter(), collections.Counter()
    with open(f"/proc/{pid}/pagemap", "rb") as pagemap:
        for mapping in mappings:
            low, high = (int(value, 16) for value in mapping[0].split("-"))
            pagemap.seek(low // 4096 * 8)
            entries = pagemap.read((high - low) // 4096 * 8)
            for index in range(len(entries) // 8):
                (entry,) = struct.unpack_from("<Q", entries, index * 8)
                address = low + index * 4096 - bias
                name = next((section for section, start, size in table if start <= address < start + size), "(between sections)")
                total[name] += 4096
                if entry >> 63:
                    present[name] += 4096
    return present, total


def main() -> int:
    positional = [argument for argument in sys.argv[1:] if not argument.startswith("--")]
    docrouted = os.path.abspath(positional[0])
    files = int(positional[1]) if len(positional) > 1 else 0
    root = tempfile.mkdtemp(prefix="resident-sections-", dir=os.path.join(os.getcwd(), ".build"))
    try:
        for folder in ("inbox", "stage", "handlers", "containers", "state", "quarantine"):
            os.makedirs(os.path.join(root, folder))
        with open(os.path.join(root, "handlers/everything.plist"), "w") as f:
            f.write(step_profile.HANDLER)
        with open(os.path.join(root, "docroute.toml"), "w") as f:
            f.write(f'socket = "{root}/s.sock"\nstate_directory = "{root}/state"\n'
                    f'containers_directory = "{root}/containers"\nhandlers_directory = "{root}/handlers"\n'
                    f'quarantine_directory = "{root}/quarantine"\nmax_unacknowledged = 256\n'
                    f'[[inbox]]\npath = "{root}/inbox"\nkind = "directory"\ndefault_mailbox = "Inbox"\n')
        body = b"HEADER\n" + b" " * 4089
        for index in range(files):
            with open(os.path.join(root, "stage", f"f{index}.pdb"), "wb") as f:
                f.write(body)
        daemon = subprocess.Popen([docrouted, "--config", os.path.join(root, "docroute.toml"), "--log-level", "warning"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while not os.path.exists(os.path.join(root, "s.sock")):
            time.sleep(0.05)
        time.sleep(1)
        if files:
            subscriber = step_profile.Subscriber(os.path.join(root, "s.sock"))
            subscriber.start()
            for index in range(files):
                os.rename(os.path.join(root, "stage", f"f{index}.pdb"), os.path.join(root, "inbox", f"f{index}.pdb"))
            while subscriber.acknowledged < files:
                time.sleep(0.05)
        present, total = resident(daemon.pid, docrouted)
        daemon.terminate()
        daemon.wait()
        mib = 1 << 20
        print(f"{docrouted}: resident after start{f' and {files:,} files' if files else ''}: "
              f"{sum(present.values()) / mib:.1f} MiB of {sum(total.values()) / mib:.1f} MiB mapped")
        for name, size in sorted(present.items(), key=lambda item: -item[1]):
            if size >= mib / 10:
                print(f"  {name:32s} {size / mib:6.1f} of {total[name] / mib:6.1f} MiB")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
