#!/usr/bin/env python3
"""The admin's durable loop: what a careful administrator writes instead of docroute.

For every file in SOURCE (in batches of 256): copy it to a new temporary file in DESTINATION,
one syncfs(2) for the batch, rename each copy to its final name, fsync DESTINATION, unlink the
sources. Prints one JSON line: {"files": N, "seconds": S}.

docroute-bench compare runs it on the same file system as docrouted, in the same invocation.
"""
import ctypes
import json
import os
import sys
import time

BATCH = 256


def main() -> int:
    if len(sys.argv) != 3:
        print("usage: durable-loop.py SOURCE DESTINATION", file=sys.stderr)
        return 2
    source, destination = sys.argv[1], sys.argv[2]
    libc = ctypes.CDLL(None, use_errno=True)
    names = sorted(os.listdir(source))
    folder = os.open(destination, os.O_RDONLY | os.O_DIRECTORY)
    start = time.monotonic()
    for first in range(0, len(names), BATCH):
        batch = names[first:first + BATCH]
        for name in batch:
            src = os.open(os.path.join(source, name), os.O_RDONLY)
            dst = os.open(os.path.join(destination, "." + name + ".tmp"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            while True:
                chunk = os.read(src, 1 << 20)
                if not chunk:
                    break
                os.write(dst, chunk)
            os.close(dst)
            os.close(src)
        if libc.syncfs(folder) != 0:
            raise OSError(ctypes.get_errno(), "syncfs")
        for name in batch:
            os.rename(os.path.join(destination, "." + name + ".tmp"), os.path.join(destination, name))
        os.fsync(folder)
        for name in batch:
            os.unlink(os.path.join(source, name))
    seconds = time.monotonic() - start
    os.close(folder)
    print(json.dumps({"files": len(names), "seconds": seconds}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
