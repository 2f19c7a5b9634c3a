"""The pieces that need no daemon: file URLs, line framing, the request limit, the backoff, the install."""

from __future__ import annotations

import importlib.metadata
import os
import unittest
from pathlib import Path

import docroute
from docroute.messages import status_from
from docroute.wire import LineFramer, encode_line
from harness import REPOSITORY


class FileURLTests(unittest.TestCase):
    def test_every_byte_but_unreserved_ones_is_percent_encoded_and_comes_back(self) -> None:
        path = b"/srv/Shared Files/r\xc3\xa9sum\xc3\xa9 #1?.pdb"
        url = docroute.file_url(path)
        self.assertEqual(url, "file:///srv/Shared%20Files/r%C3%A9sum%C3%A9%20%231%3F.pdb")
        self.assertEqual(docroute.path_bytes_from_file_url(url), path)

    def test_a_name_that_is_not_utf8_opens_the_same_file(self) -> None:
        raw = b"/tmp/caf\xe9.pdb"
        url = docroute.file_url(raw)
        self.assertEqual(url, "file:///tmp/caf%E9.pdb")
        self.assertEqual(os.fsencode(docroute.path_from_file_url(url)), raw)

    def test_file_urls_that_name_no_local_file_are_refused(self) -> None:
        self.assertEqual(docroute.path_bytes_from_file_url("file://localhost/a%2Fb"), b"/a/b")
        self.assertEqual(docroute.path_bytes_from_file_url("FILE:/x"), b"/x")
        for bad in ("http://host/x", "file://elsewhere/x", "file:///x?y", "file:///%zz", "file:///%00", "file:relative"):
            with self.assertRaises(ValueError, msg=bad):
                docroute.path_bytes_from_file_url(bad)
        with self.assertRaises(docroute.DocRouteError):
            docroute.file_url("relative/path")


class FramingTests(unittest.TestCase):
    def test_lines_split_across_reads_and_several_in_one_read(self) -> None:
        framer = LineFramer()
        self.assertEqual(framer.feed(b'{"a":1}\n{"b"'), [b'{"a":1}'])
        self.assertEqual(framer.feed(b":2}\n\n{}\n"), [b'{"b":2}', b"", b"{}"])
        self.assertEqual(framer.buffered, 0)

    def test_a_line_over_the_limit_is_dropped_and_the_next_one_read(self) -> None:
        framer = LineFramer(maximum_line_length=8)
        self.assertEqual(framer.feed(b"123456789"), [])
        self.assertEqual(framer.dropped_lines, 1)
        self.assertEqual(framer.buffered, 0, "its bytes are not kept")
        self.assertEqual(framer.feed(b"0\nok\n"), [b"ok"])
        self.assertEqual(framer.feed(b"toolongline\nfine\n"), [b"fine"])
        self.assertEqual(framer.dropped_lines, 2)

    def test_a_request_over_one_mebibyte_is_refused_before_it_is_sent(self) -> None:
        self.assertEqual(encode_line({"type": "status", "id": "1"}), b'{"type":"status","id":"1"}\n')
        with self.assertRaises(docroute.DocRouteError) as refused:
            encode_line({"type": "open", "url": "todolist://" + "x" * docroute.MAXIMUM_LINE_LENGTH})
        self.assertEqual(refused.exception.code, docroute.ErrorCode.REQUEST_TOO_LONG)


class StatusReadingTests(unittest.TestCase):
    def test_a_handlers_hosts_and_instances_in_a_fleet(self) -> None:
        report = status_from(
            {
                "type": "status",
                "id": "1",
                "handlers": [
                    {"bundleIdentifier": "a", "subscribed": True, "pending": 0, "instances": 3, "hosts": ["host-a", "host-b"]},
                    {"bundleIdentifier": "b", "subscribed": False, "pending": 2, "hosts": []},
                    {"bundleIdentifier": "c", "subscribed": True, "pending": 0},
                ],
                "inboxes": [],
            }
        )
        self.assertEqual([entry.hosts for entry in report.handlers], [["host-a", "host-b"], [], None])
        self.assertEqual([entry.instances for entry in report.handlers], [3, 0, 1])


class BackoffTests(unittest.TestCase):
    def test_doubles_from_initial_up_to_maximum(self) -> None:
        backoff = docroute.ReconnectBackoff()
        self.assertEqual([backoff.delay(n) for n in (1, 2, 3, 7, 10_000)], [0.1, 0.2, 0.4, 5.0, 5.0])
        with self.assertRaises(ValueError):
            docroute.ReconnectBackoff(initial=0)


class InstalledPackageTests(unittest.TestCase):
    """What `pip install ./Clients/Python` gave; run by `make test` from a fresh venv."""

    @unittest.skipUnless(os.environ.get("DOCROUTE_PYTHON_INSTALLED") == "1", "runs when make test installed the package into a venv")
    def test_the_package_under_test_is_the_installed_one(self) -> None:
        module = Path(docroute.__file__).resolve()
        self.assertNotIn(str(REPOSITORY / "Clients" / "Python" / "src"), str(module))
        self.assertIn("site-packages", module.parts)
        self.assertTrue((module.parent / "py.typed").is_file(), "PEP 561 marker installed")
        metadata = importlib.metadata.metadata("docroute")
        self.assertEqual(metadata["Version"], "0.2.0")
        self.assertEqual(metadata["License-Expression"], "Apache-2.0")
        self.assertEqual(importlib.metadata.requires("docroute"), None, "standard library only")

    def test_the_version_is_the_one_the_metadata_names(self) -> None:
        text = (REPOSITORY / "Clients" / "Python" / "pyproject.toml").read_text(encoding="utf-8")
        self.assertIn(f'version = "{docroute.__version__}"', text)


if __name__ == "__main__":
    unittest.main()
