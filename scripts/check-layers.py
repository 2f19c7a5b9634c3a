#!/usr/bin/env python3
"""Checks the imports of every target against the build and against docs/ARCHITECTURE.md.

The daemon is laid out in the order a file flows through it, and each target may import only what
docs/ARCHITECTURE.md's table says; Package.swift declares what each target depends on. The two and
the `import` lines of the Swift files must tell the same story, or the layout stops telling where a
change belongs. This reads

  - the build's own graph: `swift package dump-package` (with DOCROUTE_FUZZ=1, so the fuzz targets
    Package.swift declares only then are checked too), each target's declared dependencies, for the
    root package and the packages it depends on by a path inside the repository (Clients/Swift);
  - the table "| target | may import (besides the pure-logic targets and packages) |" of
    docs/ARCHITECTURE.md, one row per target;
  - every Swift file of every target (Sources/<Target>/, Tests/<Target>/ for test targets), every
    form of import (`@testable`, `@preconcurrency`, `@_exported`, `package`/`internal`/... import,
    `import struct X.Y`, imports inside `#if canImport(...)`), skipping comments and string literals;
  - scripts/layer-exceptions.txt, the files outside DocRoutePlatform still allowed to import the C
    library or the C shim,

and fails, one line per problem as `file:line: what is wrong; what to do`, on:

  - an import of a project target that the table does not allow for the importing target;
  - a dependency declared in Package.swift that no file of the target imports;
  - an imported module that the target does not declare as a dependency itself;
  - Glibc, Musl, Darwin or CDocRouteShim imported by a source target of the root package other than
    DocRoutePlatform, from a file not on the exceptions list, and a line of that list its file no
    longer needs;
  - `@testable import` outside a test target;
  - a table that has no row, or a stale row, for a target of Package.swift.

Run from the repository root: `python3 scripts/check-layers.py` (or `--root DIR`).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ARCHITECTURE = "docs/ARCHITECTURE.md"
EXCEPTIONS = "scripts/layer-exceptions.txt"
TABLE_HEADER = ("target", "may import (besides the pure-logic targets and packages)")
# The one target that wraps system calls (docs/ARCHITECTURE.md, "Where a concern lives").
PLATFORM = "DocRoutePlatform"
# The C library under each of its names, and the project's C shim: DocRoutePlatform's alone.
SEALED = ("Glibc", "Musl", "Darwin", "CDocRouteShim")
# Modules the Swift toolchain provides: they need no declaration in Package.swift.
TOOLCHAIN = {
    "Swift", "_Concurrency", "_StringProcessing", "RegexBuilder", "Synchronization", "Observation",
    "Distributed", "Cxx", "CxxStdlib", "SwiftShims", "Dispatch", "Foundation", "FoundationEssentials",
    "FoundationInternationalization", "FoundationNetworking", "FoundationXML", "XCTest", "Testing",
    "Glibc", "Musl", "Darwin", "Android", "Bionic", "WASILibc", "ucrt", "WinSDK", "CRT", "os",
}
# Product name -> the modules it brings, where they differ from the product's own name.
PRODUCT_MODULES = {}
ATTRIBUTE = r"@\w+(?:\([^)]*\))?"
MODIFIER = r"(?:public|package|internal|fileprivate|private|open)"
IMPORT = re.compile(
    rf"^\s*(?P<prefix>(?:(?:{ATTRIBUTE}|{MODIFIER})\s+)*)import\s+"
    r"(?:(?:typealias|struct|class|enum|protocol|let|var|func)\s+)?(?P<module>[A-Za-z_]\w*)"
)


class Problem(Exception):
    """A check that cannot go on (no dump, no table): says what to do."""


def module_name(target):
    """A target's module name as SwiftPM makes it (docroute-bench -> docroute_bench)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", target)


def strip_code(text):
    """Yields (line number, the line's code) with comments and string literals blanked.

    Multi-line strings (the Python scripts some tests embed) and block comments span lines; an
    `import json` inside one is not an import of the Swift file.
    """
    lines = text.split("\n")
    comment_depth = 0
    string = None  # (delimiter, hashes) while inside a string literal
    for number, line in enumerate(lines, 1):
        code = []
        i = 0
        while i < len(line):
            if comment_depth:
                if line.startswith("/*", i):
                    comment_depth += 1
                    i += 2
                elif line.startswith("*/", i):
                    comment_depth -= 1
                    i += 2
                else:
                    i += 1
                continue
            if string:
                delimiter, hashes = string
                if line.startswith("\\" + hashes, i):
                    i += 1 + len(hashes) + 1
                elif line.startswith(delimiter + hashes, i):
                    string = None
                    i += len(delimiter) + len(hashes)
                    code.append(" ")
                else:
                    i += 1
                continue
            if line.startswith("//", i):
                break
            if line.startswith("/*", i):
                comment_depth = 1
                i += 2
                continue
            match = re.match(r'(#*)("""|")', line[i:])
            if match:
                hashes, delimiter = match.group(1), match.group(2)
                string = (delimiter, hashes)
                i += len(match.group(0))
                continue
            code.append(line[i])
            i += 1
        if string and string[0] == '"':
            string = None  # a single-line string never spans lines; do not let a stray quote run on
        yield number, "".join(code)


_imports = {}


def imports(path):
    """(line number, module, attributes and modifiers) for every import of a Swift file."""
    if path not in _imports:
        with open(path, encoding="utf-8") as source:
            text = source.read()
        found = []
        for number, code in strip_code(text):
            for statement in code.split(";"):
                match = IMPORT.match(statement)
                if match:
                    found.append((number, match.group("module"), match.group("prefix").split()))
        _imports[path] = found
    return _imports[path]


def dump_package(root, manifest="Package.swift"):
    """Package.swift as SwiftPM reads it, targets and their declared dependencies."""
    environment = dict(os.environ, DOCROUTE_FUZZ="1")
    # A scratch folder of its own: the repository's .build is locked while a build runs, and
    # reading the manifest needs nothing from it.
    with tempfile.TemporaryDirectory(prefix="check-layers.") as scratch:
        try:
            result = subprocess.run(
                ["swift", "package", "--scratch-path", scratch, "dump-package"], cwd=root, env=environment,
                capture_output=True, text=True, timeout=300,
            )
        except FileNotFoundError:
            raise Problem("swift not found; the check reads the build with `swift package dump-package`")
        except subprocess.TimeoutExpired:
            raise Problem(f"{manifest}:1: `swift package dump-package` did not finish in 300 s; run it by hand to see why")
    if result.returncode != 0:
        raise Problem(f"{manifest}:1: `swift package dump-package` failed; fix the manifest:\n{result.stderr.strip()}")
    return json.loads(result.stdout)


class Dependency:
    def __init__(self, name, package, kind):
        self.name = name        # target or product name
        self.package = package  # for a product, its package identity
        self.kind = kind        # "target" or "product"

    def modules(self, targets):
        if self.kind == "target":
            return {module_name(self.name)}
        return set(PRODUCT_MODULES.get(self.name, [module_name(self.name)]))

    def spelled(self):
        if self.kind == "target":
            return f'"{self.name}"'
        return f'.product(name: "{self.name}", package: "{self.package}")'


class Target:
    def __init__(self, entry, root, package=""):
        self.name = entry["name"]
        self.type = entry["type"]
        default = "Tests" if self.type == "test" else "Sources"
        # Paths are relative to the repository; `package` is the folder of the target's Package.swift.
        self.package = package
        self.manifest = os.path.join(package, "Package.swift")
        self.path = os.path.normpath(os.path.join(package, entry.get("path") or os.path.join(default, self.name)))
        self.exclude = [os.path.normpath(os.path.join(self.path, e)) for e in entry.get("exclude", [])]
        self.sources = entry.get("sources")
        self.dependencies = []
        self.root = root

    def resolve(self, entry, local):
        for dependency in entry.get("dependencies", []):
            kind, value = next(iter(dependency.items()))
            if kind == "byName" or kind == "target":
                name = value[0]
                if name in local:
                    self.dependencies.append(Dependency(name, None, "target"))
                else:
                    self.dependencies.append(Dependency(name, None, "product"))
            elif kind == "product":
                self.dependencies.append(Dependency(value[0], value[1], "product"))

    def swift_files(self):
        folder = os.path.join(self.root, self.path)
        if not os.path.isdir(folder):
            return
        for directory, subdirectories, files in os.walk(folder):
            subdirectories.sort()
            relative_directory = os.path.relpath(directory, self.root)
            if any(relative_directory == e or relative_directory.startswith(e + os.sep) for e in self.exclude):
                subdirectories[:] = []
                continue
            for name in sorted(files):
                if not name.endswith(".swift"):
                    continue
                relative = os.path.normpath(os.path.join(relative_directory, name))
                if relative in self.exclude:
                    continue
                if self.sources is not None and not any(
                    relative == os.path.normpath(os.path.join(self.path, s))
                    or relative.startswith(os.path.normpath(os.path.join(self.path, s)) + os.sep)
                    for s in self.sources
                ):
                    continue
                yield relative


class Table:
    """docs/ARCHITECTURE.md's table: for each target, what it may import, and the pure-logic targets."""

    def __init__(self, root):
        self.rows = {}      # target -> (line, allowed set, pure)
        self.order = []     # targets in the table's order
        self.problems = []
        path = os.path.join(root, ARCHITECTURE)
        try:
            with open(path, encoding="utf-8") as doc:
                lines = doc.read().split("\n")
        except FileNotFoundError:
            raise Problem(f"{ARCHITECTURE}:1: missing; it holds the table of what each target may import")
        start = None
        for number, line in enumerate(lines, 1):
            cells = self.cells(line)
            if cells and tuple(c.strip() for c in cells[:2]) == TABLE_HEADER:
                start = number
                break
        if start is None:
            raise Problem(
                f"{ARCHITECTURE}:1: no table whose header is "
                f"'| {TABLE_HEADER[0]} | {TABLE_HEADER[1]} |'; put it back, one row per target"
            )
        self.line = start
        for number in range(start + 2, len(lines) + 1):
            cells = self.cells(lines[number - 1])
            if cells is None:
                break
            self.add_row(number, cells)

    @staticmethod
    def cells(line):
        line = line.strip()
        if not line.startswith("|"):
            return None
        return [cell.strip() for cell in line.strip("|").split("|")]

    def add_row(self, number, cells):
        where = f"{ARCHITECTURE}:{number}"
        name = re.fullmatch(r"`([^`]+)`", cells[0])
        if not name:
            self.problems.append(f"{where}: the first cell must be one target name in backticks, not '{cells[0]}'")
            return
        target = name.group(1)
        if target in self.rows:
            self.problems.append(f"{where}: a second row for {target}; keep one row per target")
            return
        allowed_cell = cells[1] if len(cells) > 1 else ""
        allowed = set(re.findall(r"`([^`]+)`", allowed_cell))
        pure = bool(re.search(r"pure logic", allowed_cell, re.IGNORECASE))
        rest = re.sub(r"`[^`]+`|pure logic|[,;:—\-\s]", "", allowed_cell, flags=re.IGNORECASE)
        if rest:
            self.problems.append(
                f"{where}: '{allowed_cell}' is not a list of target names in backticks; write each "
                f"target {target} may import as `Name`, '—' for none, 'pure logic' to mark a pure-logic "
                f"target, and put reasons in the next column"
            )
        self.rows[target] = (number, allowed, pure)
        self.order.append(target)

    def pure(self):
        return {target for target, (_, _, pure) in self.rows.items() if pure}


def read_exceptions(root):
    """scripts/layer-exceptions.txt: path -> (line, modules, reason)."""
    exceptions = {}
    problems = []
    path = os.path.join(root, EXCEPTIONS)
    if not os.path.exists(path):
        return exceptions, problems
    with open(path, encoding="utf-8") as listing:
        for number, line in enumerate(listing, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            match = re.fullmatch(r"\s*(\S+):\s*([\w, ]+?)\s+--\s+(\S.*)", line)
            where = f"{EXCEPTIONS}:{number}"
            if not match:
                problems.append(f"{where}: write 'path: Module, Module -- why', one file a line")
                continue
            file, modules, reason = match.group(1), match.group(2), match.group(3)
            modules = {m.strip() for m in modules.split(",") if m.strip()}
            unknown = modules - set(SEALED)
            if unknown:
                problems.append(f"{where}: {', '.join(sorted(unknown))} is not one of {', '.join(SEALED)}; list only those")
            if file in exceptions:
                problems.append(f"{where}: {file} is listed twice; keep one line per file")
            exceptions[file] = (number, modules, reason)
    return exceptions, problems


def manifest_line(root, target, dependency=None, manifest="Package.swift"):
    """The line of `manifest` that declares `target` (or its `dependency`), for the message."""
    try:
        with open(os.path.join(root, manifest), encoding="utf-8") as manifest:
            lines = manifest.read().split("\n")
    except OSError:
        return 1
    start = None
    for number, line in enumerate(lines, 1):
        if re.search(rf'\.(?:target|executableTarget|testTarget|systemLibrary)\(\s*name:\s*"{re.escape(target)}"', line) or (
            re.match(rf'\s*name:\s*"{re.escape(target)}"', line)
            and number > 1 and re.search(r"\.(?:target|executableTarget|testTarget)\($", lines[number - 2].strip())
        ):
            start = number
            break
    if start is None or dependency is None:
        return start or 1
    quoted = f'"{dependency.name}"'
    for number in range(start, len(lines) + 1):
        line = lines[number - 1]
        if number > start and re.search(r"\.(?:target|executableTarget|testTarget|systemLibrary)\(", line):
            break
        if quoted in line:
            return number
    return start


def local_packages(root, dump):
    """The packages the root one depends on by a path inside the repository (Clients/Swift)."""
    found = []
    top = os.path.realpath(root)
    for dependency in dump.get("dependencies", []):
        for location in dependency.get("fileSystem", []):
            path = os.path.realpath(os.path.join(root, location["path"]))
            if os.path.commonpath([top, path]) == top and path != top:
                found.append(os.path.relpath(path, top))
    return sorted(found)


def check(root):
    problems = []
    dump = dump_package(root)
    # The packages of the repository: the root one, and those it depends on by path, whose targets
    # the table covers too (a daemon target importing the client library is as wrong as any).
    packages = [("", dump)] + [(folder, dump_package(os.path.join(root, folder), os.path.join(folder, "Package.swift"))) for folder in local_packages(root, dump)]
    local = {entry["name"] for _, package in packages for entry in package["targets"]}
    targets = {}
    for folder, package in packages:
        for entry in package["targets"]:
            target = Target(entry, root, folder)
            target.resolve(entry, local)
            targets[target.name] = target
    by_module = {module_name(name): name for name in targets}

    def reexports(module, seen=None):
        """The modules a local module re-exports, and those they re-export in turn."""
        seen = set() if seen is None else seen
        target = targets.get(by_module.get(module))
        if target is None or module in seen:
            return set()
        seen.add(module)
        found = set()
        for file in target.swift_files():
            for _, imported, prefix in imports(os.path.join(root, file)):
                if "@_exported" in prefix:
                    found |= {imported} | reexports(imported, seen)
        return found
    # Where a product is declared anywhere, so the advice for an undeclared one can spell it.
    known_products = {}
    for target in targets.values():
        for dependency in target.dependencies:
            if dependency.kind == "product" and dependency.package:
                for module in dependency.modules(targets):
                    known_products.setdefault(module, dependency)

    table = Table(root)
    problems += table.problems
    pure = table.pure()
    for name in targets:
        if name not in table.rows:
            problems.append(
                f"{ARCHITECTURE}:{table.line}: {name} ({targets[name].manifest}) has no row in the table; "
                f"add one saying what it may import"
            )
    for name, (number, allowed, _) in table.rows.items():
        if name not in targets:
            problems.append(f"{ARCHITECTURE}:{number}: {name} is not a target of the repository's packages; remove its row or fix the name")
        for other in sorted(allowed):
            if other not in targets:
                problems.append(f"{ARCHITECTURE}:{number}: {name} may import {other}, which is not a target of the repository's packages; fix the name")
            elif other in table.rows and table.order.index(other) > table.order.index(name):
                problems.append(
                    f"{ARCHITECTURE}:{number}: {name} may import {other}, whose row comes after it; "
                    f"the table lists targets in flow order, each importing only rows above it"
                )

    exceptions, exception_problems = read_exceptions(root)
    problems += exception_problems
    sealed_use = {}  # file -> {sealed module: line} (source targets outside Platform)
    sealed_scope = set()  # every Swift file of those targets

    for name in sorted(targets):
        target = targets[name]
        if target.type in ("system", "plugin", "binary"):
            continue
        folder = os.path.join(root, target.path)
        if not os.path.isdir(folder):
            problems.append(f"{target.manifest}:{manifest_line(root, name, manifest=target.manifest)}: {name}'s folder {target.path} is missing; fix its path")
            continue
        row = table.rows.get(name)
        allowed = (row[1] if row else set()) | pure
        declared = {}
        for dependency in target.dependencies:
            for module in dependency.modules(targets):
                declared[module] = dependency
        # A module a declared local dependency re-exports (`@_exported import`) is reached through
        # it: importing it needs no declaration of its own, and a declaration of it is used when
        # the module that re-exports it is imported.
        exported = {}
        for dependency in target.dependencies:
            for module in dependency.modules(targets):
                for reexported in reexports(module):
                    exported.setdefault(reexported, dependency)
        used = set()
        # The root package's source targets; a package of its own (the Swift client) cannot use
        # DocRoutePlatform and keeps its own C target.
        seals = (
            not target.package and target.type != "test"
            and not target.path.startswith("Tests" + os.sep) and name != PLATFORM
        )
        for file in target.swift_files():
            if seals:
                sealed_scope.add(file)
            for number, module, prefix in imports(os.path.join(root, file)):
                where = f"{file}:{number}"
                used.add(module)
                if "@testable" in prefix and target.type != "test":
                    problems.append(f"{where}: @testable import in {name}, which is not a test target; import {module} plainly and use its package API")
                if module in SEALED:
                    if seals:
                        sealed_use.setdefault(file, {})[module] = number
                        if module not in exceptions.get(file, (None, set()))[1]:
                            continue  # told below: the import itself is what has to go
                    if module in TOOLCHAIN:
                        continue
                if module == module_name(name):
                    continue
                local_target = by_module.get(module)
                if local_target and module not in SEALED and local_target not in allowed and row:
                    problems.append(
                        f"{where}: {name} imports {local_target}, which {ARCHITECTURE}'s table does not allow "
                        f"for {name}; move the code to a target that may, or have {name} define a protocol "
                        f"or take a closure that a later target fills in"
                    )
                    continue
                if module in TOOLCHAIN or module in declared:
                    continue
                if module in exported:
                    continue
                if local_target:
                    advice = f'add "{local_target}" to its dependencies'
                elif module in known_products:
                    advice = f"add {known_products[module].spelled()} to its dependencies"
                else:
                    advice = "add the target or .product(name:package:) that provides it to its dependencies"
                problems.append(f"{where}: {name} imports {module}, which {target.manifest} does not declare for {name}; {advice}")
        reached = set(used)
        for module in used:
            reached |= reexports(module)
        for dependency in target.dependencies:
            if dependency.kind == "target" and targets.get(dependency.name) and targets[dependency.name].type == "executable":
                continue  # built first (a test runs it), never imported
            if not (dependency.modules(targets) & reached):
                problems.append(
                    f"{target.manifest}:{manifest_line(root, name, dependency, target.manifest)}: {name} declares {dependency.spelled()} "
                    f"and no file of it imports {', '.join(sorted(dependency.modules(targets)))}; remove it from {name}'s dependencies"
                )

    for file in sorted(sealed_use):
        modules = sealed_use[file]
        listed = exceptions.get(file, (None, set(), None))[1]
        for module, number in sorted(modules.items(), key=lambda item: item[1]):
            if module not in listed:
                problems.append(
                    f"{file}:{number}: imports {module} outside {PLATFORM}; call a {PLATFORM} wrapper "
                    f"instead (add one there if none fits), or list the file in {EXCEPTIONS} with the reason"
                )
    for file, (number, modules, _) in sorted(exceptions.items()):
        stale = sorted(modules - set(sealed_use.get(file, {})))
        if not os.path.exists(os.path.join(root, file)):
            problems.append(f"{EXCEPTIONS}:{number}: {file} no longer exists; remove its line")
        elif file not in sealed_scope:
            problems.append(
                f"{EXCEPTIONS}:{number}: {file} is no source file of a target other than {PLATFORM} "
                f"(those and test targets need no exception); remove its line"
            )
        elif stale:
            problems.append(
                f"{EXCEPTIONS}:{number}: {file} no longer imports {', '.join(stale)}; remove "
                f"{'them' if len(stale) > 1 else 'it'} from its line (the line too if nothing is left): the list only shrinks"
            )
    return problems, targets, exceptions


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=".", help="the package's folder (default: the current one)")
    root = parser.parse_args().root
    try:
        problems, targets, exceptions = check(root)
    except Problem as problem:
        print(problem, file=sys.stderr)
        return 1
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"{len(problems)} problem(s) with the layers; see {ARCHITECTURE}", file=sys.stderr)
        return 1
    print(
        f"layers: {len(targets)} targets import what {ARCHITECTURE} allows and Package.swift declares; "
        f"{len(exceptions)} file(s) outside {PLATFORM} still import the C library or shim ({EXCEPTIONS})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
