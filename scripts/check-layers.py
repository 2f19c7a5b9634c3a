#!/usr/bin/env python3
"""Checks that the daemon's targets import only targets above them (docs/ARCHITECTURE.md).

The daemon is laid out in the order a file flows through it; a target that imported one later in
the flow would be a back-edge, and the layout would stop telling where a change belongs. This reads
the `import` lines of every Swift file under Sources/ and fails, naming file and line, on:
  - a daemon target importing a later one;
  - docroutectl importing a target past intake (it reads configuration, types files, inspects mail);
  - a pure-logic target importing any daemon target.
Run from the repository root: `python3 scripts/check-layers.py`.
"""
import os
import re
import sys

FLOW = [
    "DocRoutePlatform", "DocRouteConfiguration", "DocRouteMaildir", "DocRouteIntake", "DocRouteLedger",
    "DocRouteDelivery", "DocRouteServer", "DocRouteOperations", "DocRouteDaemon",
]
PURE = ["DocRouteTypes", "DocRouteHandlers", "DocRouteProtocol", "DocRouteMail"]
# What each non-flow target may import of the flow.
ALLOWED = {
    "docroutectl": set(FLOW[:FLOW.index("DocRouteIntake") + 1]),
    "docrouted": set(FLOW),
    "docroute-bench": set(),
    **{target: set() for target in PURE},
}

def imports(path):
    with open(path, encoding="utf-8") as source:
        for number, line in enumerate(source, 1):
            match = re.match(r"^\s*(?:@testable\s+)?import\s+(?:\w+\s+)?(\w+)", line)
            if match:
                yield number, match.group(1)

def main():
    problems = []
    for target in sorted(os.listdir("Sources")):
        if target in FLOW:
            allowed = set(FLOW[:FLOW.index(target)])
        elif target in ALLOWED:
            allowed = ALLOWED[target]
        else:
            continue
        for folder, _, files in os.walk(os.path.join("Sources", target)):
            for name in sorted(files):
                if not name.endswith(".swift"):
                    continue
                path = os.path.join(folder, name)
                for number, module in imports(path):
                    if module in FLOW and module != target and module not in allowed:
                        problems.append(f"{path}:{number}: {target} imports {module}, which comes after it in the flow")
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"{len(problems)} import(s) against the flow; see docs/ARCHITECTURE.md", file=sys.stderr)
        return 1
    print(f"layers: {len(FLOW)} daemon targets in flow order, no back-edges")
    return 0

if __name__ == "__main__":
    sys.exit(main())
