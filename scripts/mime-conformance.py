#!/usr/bin/env python3
"""Runs shared-mime-info's own detection suite against `docroutectl type`.

Usage: scripts/mime-conformance.py DOCROUTECTL [--gio] [--threshold PERCENT] [--suite DIR] [--data-dir DIR]

The suite (../shared/conformance/shared-mime-info, see its README) lists `FILE EXPECTED [NDF]`
cases. Every full-file case (third flag not `x`) whose sample is present is typed with ONE
`docroutectl type --json` call, against the database the cases were written for: the suite's
`data/freedesktop.org.xml.in`, compiled with update-mime-database into
`.build/mime-conformance/`, reached through XDG_DATA_DIRS (XDG_DATA_HOME points at a folder
without `mime/`, so nothing of the machine's own database leaks in). No handlers take part.

Prints the figure and every miss; exits 1 below the threshold (99% by default), 0 with a SKIP
line when the suite is absent. `--gio` also types the same cases with GLib's `gio info` (the
reference implementation of the spec's algorithm) and prints its figure. `--data-dir /usr/share`
types against the machine's own compiled database instead (for comparison only; the suite tests
types that Debian's database may not have).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read_cases(suite):
    """(name, expected) for every full-file case of the list whose sample is present, and the
    number of full-file cases in the list."""
    listing = os.path.join(suite, "tests", "mime-detection", "list")
    cases = []
    total = 0
    with open(listing, encoding="utf-8") as handle:
        for line in handle:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            fields = line.split()
            if len(fields) < 2:
                continue
            flags = fields[2] if len(fields) > 2 else ""
            # The third flag character is the full-file lookup; `x` there is an expected failure.
            if len(flags) >= 3 and flags[2] == "x":
                continue
            total += 1
            path = os.path.join(suite, "tests", "mime-detection", fields[0])
            if os.path.isfile(path):
                cases.append((fields[0], fields[1]))
    return cases, total


def compile_database(suite, build):
    """Compiles the suite's database into BUILD/share/mime unless it is already up to date."""
    source = os.path.join(suite, "data", "freedesktop.org.xml.in")
    share = os.path.join(build, "share")
    packages = os.path.join(share, "mime", "packages")
    target = os.path.join(packages, "freedesktop.org.xml")
    compiled = os.path.join(share, "mime", "globs2")
    if (os.path.exists(compiled) and os.path.exists(target)
            and os.path.getmtime(compiled) >= os.path.getmtime(source)):
        return share
    if shutil.which("update-mime-database") is None:
        sys.exit("error: update-mime-database is missing; install Debian's shared-mime-info (make deps)")
    os.makedirs(packages, exist_ok=True)
    shutil.copyfile(source, target)
    # It warns that the folder is not on the XDG search path; the runner sets the path itself.
    result = subprocess.run(["update-mime-database", os.path.join(share, "mime")], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"error: update-mime-database failed on {source}: {result.stderr.strip()}")
    return share


def environment(share, build):
    empty_home = os.path.join(build, "empty-data-home")
    os.makedirs(empty_home, exist_ok=True)
    env = dict(os.environ)
    env["XDG_DATA_DIRS"] = share
    env["XDG_DATA_HOME"] = empty_home
    return env


def docroute_types(docroutectl, paths, env, build):
    handlers = os.path.join(build, "no-handlers")
    os.makedirs(handlers, exist_ok=True)
    result = subprocess.run([docroutectl, "type", "--json", "--handlers", handlers] + paths,
                            env=env, capture_output=True, text=True)
    try:
        entries = json.loads(result.stdout)
    except json.JSONDecodeError:
        sys.exit(f"error: docroutectl type gave no JSON (exit {result.returncode}): {result.stderr.strip()}")
    found = {}
    for entry in entries:
        found[entry["path"]] = entry.get("mimeType") or ("error: " + entry["error"] if "error" in entry else None)
    return found


def gio_types(paths, env):
    if shutil.which("gio") is None:
        sys.exit("error: gio is missing; install Debian's libglib2.0-bin (make deps)")
    found = {}
    # gio prints one `uri:` block per file; batches keep the command lines short.
    for start in range(0, len(paths), 200):
        batch = paths[start:start + 200]
        result = subprocess.run(["gio", "info", "-a", "standard::content-type"] + batch,
                                env=env, capture_output=True, text=True)
        current = iter(batch)
        path = None
        for line in result.stdout.splitlines():
            if line.startswith("uri:"):
                path = next(current)
            elif "standard::content-type:" in line and path is not None:
                found[path] = line.split("standard::content-type:", 1)[1].strip()
    return found


def score(name, cases, paths, found):
    misses = [(case, expected, found.get(path)) for (case, expected), path in zip(cases, paths)
              if found.get(path) != expected]
    agreed = len(cases) - len(misses)
    percent = 100.0 * agreed / len(cases)
    print(f"{name}: {agreed}/{len(cases)} = {percent:.1f}% of the present full-file cases agree")
    return percent, misses


def main():
    parser = argparse.ArgumentParser(description="shared-mime-info's detection suite against docroutectl type")
    parser.add_argument("docroutectl")
    parser.add_argument("--gio", action="store_true", help="also print gio's figure on the same cases")
    parser.add_argument("--threshold", type=float, default=99.0, help="fail below this percentage (99)")
    parser.add_argument("--suite", default=os.path.join(ROOT, "..", "shared", "conformance", "shared-mime-info"))
    parser.add_argument("--data-dir", help="an XDG data folder whose mime/ is compiled (e.g. /usr/share) instead of the suite's")
    arguments = parser.parse_args()

    suite = os.path.normpath(arguments.suite)
    if not os.path.isfile(os.path.join(suite, "tests", "mime-detection", "list")):
        print(f"SKIP mime conformance: the suite is not at {suite} (../shared/conformance/shared-mime-info)")
        return 0
    build = os.path.join(ROOT, ".build", "mime-conformance")
    share = arguments.data_dir or compile_database(suite, build)
    env = environment(share, build)
    cases, total = read_cases(suite)
    if not cases:
        print(f"SKIP mime conformance: none of the {total} full-file samples are present in {suite}")
        return 0
    paths = [os.path.join(suite, "tests", "mime-detection", name) for name, _ in cases]
    print(f"mime conformance: {len(cases)} of {total} full-file cases present; database {share}/mime")

    docroute = docroute_types(arguments.docroutectl, paths, env, build)
    percent, misses = score("docroute", cases, paths, docroute)
    for case, expected, actual in misses:
        print(f"  miss {case}: expected {expected}, got {actual}")
    if arguments.gio:
        gio = gio_types(paths, env)
        _, gio_misses = score("gio", cases, paths, gio)
        for case, expected, actual in gio_misses:
            print(f"  gio miss {case}: expected {expected}, got {actual}")
        differ = [(name, path) for (name, _), path in zip(cases, paths) if docroute.get(path) != gio.get(path)]
        print(f"docroute and gio give the same type for {len(paths) - len(differ)}/{len(paths)} files")
        for name, path in differ:
            print(f"  differ {name}: docroute {docroute.get(path)}, gio {gio.get(path)}")
    if percent < arguments.threshold:
        print(f"FAIL mime conformance: {percent:.1f}% is below {arguments.threshold:g}%")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
