#!/usr/bin/env python3
"""Plants each kind of layer violation in a small package and checks that check-layers.py fails on it.

The package is synthetic (a few empty targets, a table, an exceptions list) so that
`swift package dump-package` reads it in a second or two; each case copies it, plants one
violation, and expects exit 1 and a `file:line:` message naming the planted file. The cases run
side by side, since each waits mostly on the manifest's compilation.

Run from the repository root: `python3 scripts/test_check_layers.py`.
"""
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check-layers.py")

PACKAGE = """\
// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "layers",
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        .target(name: "DocRouteErrors"),
        .target(name: "CDocRouteShim"),
        .target(name: "DocRoutePlatform", dependencies: ["DocRouteErrors", "CDocRouteShim"]),
        .target(
            name: "DocRouteIntake",
            dependencies: [
                "DocRoutePlatform", "DocRouteErrors",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(name: "DocRouteLedger", dependencies: ["DocRoutePlatform"]),
        .executableTarget(name: "docrouted", dependencies: ["DocRouteIntake", "DocRouteLedger"]),
        .testTarget(name: "DocRouteLedgerTests", dependencies: ["DocRouteLedger", "docrouted"]),
    ]
)
"""

ARCHITECTURE = """\
# Architecture

Prose before the table.

| target | may import (besides the pure-logic targets and packages) | why |
|---|---|---|
| `DocRouteErrors` | pure logic | the error shape |
| `CDocRouteShim` | — | C |
| `DocRoutePlatform` | `CDocRouteShim` | system calls |
| `DocRouteIntake` | `DocRoutePlatform` | files in |
| `DocRouteLedger` | `DocRoutePlatform` | rows, never Intake |
| `docrouted` | `DocRouteIntake`, `DocRouteLedger` | main |
| `DocRouteLedgerTests` | `DocRouteLedger` | |

Prose after the table.
"""

EXCEPTIONS = """\
# Files outside DocRoutePlatform that still import the C library or the shim.
Sources/DocRouteLedger/Legacy.swift: Glibc -- read and write, until Platform wraps them
"""

FILES = {
    "Sources/DocRouteErrors/DocRouteError.swift": "public struct DocRouteError: Error {}\n",
    "Sources/CDocRouteShim/shim.c": "int docroute_shim(void) { return 0; }\n",
    "Sources/CDocRouteShim/include/CDocRouteShim.h": "int docroute_shim(void);\n",
    "Sources/DocRoutePlatform/Descriptor.swift": textwrap.dedent("""\
        import CDocRouteShim
        import DocRouteErrors
        #if canImport(Glibc)
        import Glibc
        #elseif canImport(Musl)
        import Musl
        #endif

        package struct Descriptor {}
        """),
    "Sources/DocRouteIntake/Intake.swift": textwrap.dedent("""\
        @preconcurrency import DocRoutePlatform
        package import struct DocRouteErrors.DocRouteError
        import Foundation
        internal import Logging

        package struct Intake {}
        """),
    # Imports inside comments and string literals (an embedded Python script) are not imports.
    "Sources/DocRouteIntake/Script.swift": textwrap.dedent('''\
        /* import DocRouteLedger
           import Glibc */
        // import CDocRouteShim
        let script = """
        import json, os
        import Glibc
        """
        let raw = #"import DocRouteLedger"#
        '''),
    "Sources/DocRouteLedger/Ledger.swift": textwrap.dedent("""\
        package import DocRoutePlatform

        package struct Ledger {}
        """),
    "Sources/DocRouteLedger/Legacy.swift": textwrap.dedent("""\
        import DocRoutePlatform
        #if canImport(Glibc)
        import Glibc
        #endif
        """),
    "Sources/docrouted/main.swift": "import DocRouteIntake\nimport DocRouteLedger\n",
    # Test targets may use @testable and the C library freely.
    "Tests/DocRouteLedgerTests/LedgerTests.swift": "@testable import DocRouteLedger\nimport Glibc\nimport Testing\n",
}


def write(root, relative, text):
    path = os.path.join(root, relative)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as file:
        file.write(text)


def append(root, relative, text):
    with open(os.path.join(root, relative), "a", encoding="utf-8") as file:
        file.write(text)


def replace(root, relative, old, new):
    path = os.path.join(root, relative)
    with open(path, encoding="utf-8") as file:
        text = file.read()
    assert old in text, (relative, old)
    with open(path, "w", encoding="utf-8") as file:
        file.write(text.replace(old, new))


CLIENT_PACKAGE = """\
// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "client",
    products: [.library(name: "DocRouteClient", targets: ["DocRouteClient"])],
    targets: [.target(name: "DocRouteClient")]
)
"""


def plant_client_package(root):
    """A package of its own beside the root one, depended on by path: its targets are checked too."""
    write(root, "Clients/Swift/Package.swift", CLIENT_PACKAGE)
    write(root, "Clients/Swift/Sources/DocRouteClient/Client.swift", "import Logging\n")
    replace(root, "Package.swift", "        .package(url:", '        .package(path: "Clients/Swift"),\n        .package(url:')
    replace(
        root, "Package.swift", '.target(name: "DocRouteLedger", dependencies: ["DocRoutePlatform"]),',
        '.target(name: "DocRouteLedger", dependencies: ["DocRoutePlatform", .product(name: "DocRouteClient", package: "Swift")]),',
    )
    replace(root, "docs/ARCHITECTURE.md", "| `CDocRouteShim` | — | C |\n", "| `CDocRouteShim` | — | C |\n| `DocRouteClient` | — | handlers' library |\n")
    append(root, "Sources/DocRouteLedger/Ledger.swift", "import DocRouteClient\n")


# Each case: a planting function and the patterns (file:line: ..., what is wrong) its output must hold.
CASES = {
    "clean": (lambda root: None, []),
    "forbidden_import": (
        lambda root: append(root, "Sources/DocRouteLedger/Ledger.swift", "import DocRouteIntake\n"),
        [r"^Sources/DocRouteLedger/Ledger\.swift:4: DocRouteLedger imports DocRouteIntake, which docs/ARCHITECTURE\.md's table does not allow"],
    ),
    "forbidden_import_preconcurrency_internal": (
        lambda root: append(root, "Sources/DocRouteLedger/Ledger.swift", "@preconcurrency internal import DocRouteIntake\n"),
        [r"^Sources/DocRouteLedger/Ledger\.swift:4: DocRouteLedger imports DocRouteIntake"],
    ),
    "declared_unused_target": (
        lambda root: replace(root, "Sources/DocRouteIntake/Intake.swift", "package import struct DocRouteErrors.DocRouteError\n", ""),
        [r'^Package\.swift:16: DocRouteIntake declares "DocRouteErrors" and no file of it imports DocRouteErrors; remove it'],
    ),
    "declared_unused_product": (
        lambda root: replace(root, "Sources/DocRouteIntake/Intake.swift", "internal import Logging\n", ""),
        [r'^Package\.swift:17: DocRouteIntake declares \.product\(name: "Logging", package: "swift-log"\) and no file of it imports Logging'],
    ),
    "imported_undeclared": (
        lambda root: append(root, "Sources/DocRouteLedger/Ledger.swift", "import DocRouteErrors\n"),
        [r"^Sources/DocRouteLedger/Ledger\.swift:4: DocRouteLedger imports DocRouteErrors, which Package\.swift does not declare for DocRouteLedger; add \"DocRouteErrors\""],
    ),
    "imported_undeclared_product": (
        lambda root: append(root, "Sources/docrouted/main.swift", "import Logging\n"),
        [r'^Sources/docrouted/main\.swift:3: docrouted imports Logging, which Package\.swift does not declare for docrouted; add \.product\(name: "Logging", package: "swift-log"\)'],
    ),
    "glibc_outside_platform": (
        lambda root: append(root, "Sources/DocRouteIntake/Intake.swift", "#if canImport(Glibc)\nimport Glibc\n#endif\n"),
        [r"^Sources/DocRouteIntake/Intake\.swift:8: imports Glibc outside DocRoutePlatform; call a DocRoutePlatform wrapper"],
    ),
    "shim_outside_platform": (
        lambda root: append(root, "Sources/DocRouteIntake/Intake.swift", "import CDocRouteShim\n"),
        [r"^Sources/DocRouteIntake/Intake\.swift:7: imports CDocRouteShim outside DocRoutePlatform"],
    ),
    "stale_exception": (
        lambda root: replace(root, "Sources/DocRouteLedger/Legacy.swift", "#if canImport(Glibc)\nimport Glibc\n#endif\n", ""),
        [r"^scripts/layer-exceptions\.txt:2: Sources/DocRouteLedger/Legacy\.swift no longer imports Glibc; remove it"],
    ),
    "client_package": (
        plant_client_package,
        [
            r"^Sources/DocRouteLedger/Ledger\.swift:4: DocRouteLedger imports DocRouteClient, which docs/ARCHITECTURE\.md's table does not allow",
            r"^Clients/Swift/Sources/DocRouteClient/Client\.swift:1: DocRouteClient imports Logging, which Clients/Swift/Package\.swift does not declare",
        ],
    ),
    "testable_outside_tests": (
        lambda root: replace(root, "Sources/docrouted/main.swift", "import DocRouteLedger", "@testable import DocRouteLedger"),
        [r"^Sources/docrouted/main\.swift:2: @testable import in docrouted, which is not a test target"],
    ),
    "target_without_row": (
        lambda root: replace(root, "docs/ARCHITECTURE.md", "| `DocRouteLedgerTests` | `DocRouteLedger` | |\n", ""),
        [r"^docs/ARCHITECTURE\.md:5: DocRouteLedgerTests \(Package\.swift\) has no row in the table; add one"],
    ),
    "table_back_edge": (
        lambda root: replace(root, "docs/ARCHITECTURE.md", "| `DocRoutePlatform` | `CDocRouteShim` |", "| `DocRoutePlatform` | `CDocRouteShim`, `DocRouteLedger` |"),
        [r"^docs/ARCHITECTURE\.md:9: DocRoutePlatform may import DocRouteLedger, whose row comes after it"],
    ),
}


def run_case(base, name):
    root = os.path.join(base, name)
    shutil.copytree(os.path.join(base, "template"), root)
    plant, _ = CASES[name]
    plant(root)
    result = subprocess.run(
        [sys.executable, CHECK, "--root", root], capture_output=True, text=True, timeout=300,
    )
    return result


class CheckLayersTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.base = tempfile.mkdtemp(prefix="check-layers-test.")
        template = os.path.join(cls.base, "template")
        write(template, "Package.swift", PACKAGE)
        write(template, "docs/ARCHITECTURE.md", ARCHITECTURE)
        write(template, "scripts/layer-exceptions.txt", EXCEPTIONS)
        for relative, text in FILES.items():
            write(template, relative, text)
        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            futures = {name: pool.submit(run_case, cls.base, name) for name in CASES}
            cls.results = {name: future.result() for name, future in futures.items()}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.base, ignore_errors=True)

    def assertFailsWith(self, name):
        result = self.results[name]
        self.assertEqual(result.returncode, 1, f"{name}: exit {result.returncode}\n{result.stdout}{result.stderr}")
        lines = result.stderr.splitlines()
        for pattern in CASES[name][1]:
            self.assertTrue(
                any(re.search(pattern, line) for line in lines),
                f"{name}: no line matches {pattern!r} in:\n{result.stderr}",
            )
        # One line per problem, each `file:line: what is wrong; what to do`, then the count.
        self.assertRegex(lines[-1], r"^\d+ problem\(s\) with the layers")
        for line in lines[:-1]:
            self.assertRegex(line, r"^[\w./+-]+:\d+: .+; .+")

    def test_clean_package_passes(self):
        result = self.results["clean"]
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("1 file(s) outside DocRoutePlatform", result.stdout)

    def test_forbidden_import(self):
        self.assertFailsWith("forbidden_import")

    def test_forbidden_import_with_attribute_and_access_level(self):
        self.assertFailsWith("forbidden_import_preconcurrency_internal")

    def test_declared_target_never_imported(self):
        self.assertFailsWith("declared_unused_target")

    def test_declared_product_never_imported(self):
        self.assertFailsWith("declared_unused_product")

    def test_imported_target_not_declared(self):
        self.assertFailsWith("imported_undeclared")

    def test_imported_product_not_declared(self):
        self.assertFailsWith("imported_undeclared_product")

    def test_glibc_outside_platform(self):
        self.assertFailsWith("glibc_outside_platform")

    def test_shim_outside_platform(self):
        self.assertFailsWith("shim_outside_platform")

    def test_stale_exception(self):
        self.assertFailsWith("stale_exception")

    def test_package_depended_on_by_path_is_checked_too(self):
        self.assertFailsWith("client_package")

    def test_testable_import_outside_a_test_target(self):
        self.assertFailsWith("testable_outside_tests")

    def test_target_without_a_row_in_the_table(self):
        self.assertFailsWith("target_without_row")

    def test_table_row_naming_a_later_target(self):
        self.assertFailsWith("table_back_edge")


if __name__ == "__main__":
    unittest.main()
