#!/usr/bin/env python3
"""Microseconds per file by delivery step, from docrouted's own step timings (its debug log).

Usage: bench/step-profile.py DOCROUTED [FILES]   (a release build; default 10,000 files of 4 KiB)

Starts docrouted on a temporary tree beside the build (on the same file system as the project),
renames FILES files into its inbox at once, waits until every copy is in the sandbox and the inbox
is empty, stops it, and sums each batch's `steps=` (copy, sync, queued, lookup, stage, place,
commit, remove) over the files. Nothing subscribes: dispatch and acknowledgements are not in it.
"""
import os
import re
import shutil
import subprocess
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


def main() -> int:
    docrouted = sys.argv[1]
    files = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000
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
        body = b"HEADER\n" + b" " * 4089
        for index in range(files):
            with open(os.path.join(root, "stage", f"f{index}.pdb"), "wb") as f:
                f.write(body[:4096])
        os.sync()
        log = open(os.path.join(root, "log"), "w")
        daemon = subprocess.Popen([docrouted, "--config", os.path.join(root, "docroute.toml"), "--log-level", "debug"],
                                  stdout=log, stderr=log)
        while not os.path.exists(os.path.join(root, "s.sock")):
            time.sleep(0.05)
        start = time.monotonic()
        for index in range(files):
            os.rename(os.path.join(root, "stage", f"f{index}.pdb"), os.path.join(root, "inbox", f"f{index}.pdb"))
        sandbox = os.path.join(root, "containers/org.example.everything/Documents/Inbox/Inbox")
        while not (os.path.isdir(sandbox) and len(os.listdir(sandbox)) >= files and not os.listdir(os.path.join(root, "inbox"))):
            time.sleep(0.02)
        seconds = time.monotonic() - start
        daemon.terminate()
        daemon.wait()
        log.close()
        totals: dict[str, int] = {}
        delivered = 0
        for line in open(os.path.join(root, "log")):
            if "delivered a batch" not in line:
                continue
            count = re.search(r"files[=:] ?(\d+)", line)
            delivered += int(count.group(1)) if count else 0
            for name, micros in re.findall(r"(\w+)=(\d+)us", line):
                totals[name] = totals.get(name, 0) + int(micros)
        print(f"{files} files of 4 KiB, {seconds:.2f} s until all were in the sandbox "
              f"({files / seconds:,.0f} files/s); {delivered} in batches with step timings")
        print(f"{'step':<8} {'us/file':>8}")
        for name, micros in totals.items():
            print(f"{name:<8} {micros / max(delivered, 1):8.1f}")
        print(f"{'all':<8} {sum(totals.values()) / max(delivered, 1):8.1f}   (steps of two batches overlap: copy runs beside the previous commit)")
        return 0
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
