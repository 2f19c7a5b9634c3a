"""Runs the real docrouted on a temporary tree, as Tests/IntegrationTests/DaemonHarness.swift does.

The daemon is ``$DOCROUTE_BIN_DIR/docrouted`` (the Makefile passes its debug build folder), else
the checkout's ``.build/debug/docrouted``. Each test gets its own socket, inbox, containers,
quarantine, state folder and the sample handler manifests from config/handlers, without their
launch commands, so no launched handler races a test for its documents.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest
from collections.abc import Callable
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[3]
MOLECULES = "com.sunsetlakesoftware.molecules"
TEXTVIEWER = "org.docroute.textviewer"
TODOLIST = "com.acme.todolist"
PDB = b"HEADER    PROTEIN\nATOM      1  N   ALA A   1      11.104   6.134  -6.504  1.00  0.00           N\nEND\n"


def daemon_binary() -> Path:
    folder = os.environ.get("DOCROUTE_BIN_DIR") or str(REPOSITORY / ".build" / "debug")
    return Path(folder) / "docrouted"


class Daemon:
    """One docrouted on its own temporary tree; :meth:`remove` kills it and deletes the tree."""

    def __init__(self) -> None:
        # Unix socket paths are limited to 107 bytes: a short root under /tmp.
        self.root = Path(tempfile.mkdtemp(prefix="drpy-", dir="/tmp"))
        self.inbox = self.root / "drop"
        self.containers = self.root / "containers"
        self.handlers = self.root / "handlers.d"
        self.socket = str(self.root / "s.sock")
        self.config = self.root / "docroute.toml"
        self.log = self.root / "daemon.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.inbox.mkdir()
        self.handlers.mkdir()
        for manifest in sorted((REPOSITORY / "config" / "handlers").glob("*.plist")):
            text = manifest.read_text(encoding="utf-8")
            text = re.sub(r"<key>DocRouteLaunchCommand</key>\s*<array>.*?</array>", "", text, flags=re.DOTALL)
            (self.handlers / manifest.name).write_text(text, encoding="utf-8")
        self.config.write_text(
            f'''socket = "{self.socket}"
state_directory = "{self.root}/state"
containers_directory = "{self.containers}"
handlers_directory = "{self.handlers}"
quarantine_directory = "{self.root}/quarantine"

[[inbox]]
path = "{self.inbox}"
kind = "directory"
default_mailbox = "Inbox"
source_application = "com.apple.mobilemail"
''',
            encoding="utf-8",
        )

    def start(self) -> None:
        """Starts docrouted and waits until it says it is ready and its socket answers."""
        binary = daemon_binary()
        if not binary.exists():
            raise RuntimeError(f"{binary} does not exist; build it with 'swift build' or set DOCROUTE_BIN_DIR")
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [str(binary), "--config", str(self.config), "--log-level", "debug"],
                stdout=log,
                stderr=log,
                stdin=subprocess.DEVNULL,
            )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if "docrouted ready" in self.daemon_log() and self._answers():
                return
            if self.process.poll() is not None:
                raise RuntimeError(f"docrouted exited with {self.process.returncode}:\n{self.daemon_log()}")
            time.sleep(0.02)
        raise RuntimeError(f"docrouted did not open its socket within 30 s:\n{self.daemon_log()}")

    def _answers(self) -> bool:
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(self.socket)
            return True
        except OSError:
            return False
        finally:
            probe.close()

    def stop(self) -> None:
        """SIGTERM, as systemd stops it, and waits for it to exit."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def remove(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.root, ignore_errors=True)

    def daemon_log(self) -> str:
        try:
            return self.log.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return ""

    def drop(self, name: str, data: bytes, mailbox: str | None = None) -> Path:
        """Writes a file as a careful sender does: a hidden temporary name, then a rename."""
        folder = self.inbox if mailbox is None else self.inbox / mailbox
        folder.mkdir(parents=True, exist_ok=True)
        temporary = folder / f".incoming-{os.getpid()}-{time.monotonic_ns()}"
        temporary.write_bytes(data)
        final = folder / name
        os.rename(temporary, final)
        return final

    def sandbox(self, bundle_identifier: str, mailbox: str = "Inbox") -> Path:
        return self.containers / bundle_identifier / "Documents" / "Inbox" / mailbox

    def wait_for_inbox_drained(self, timeout: float = 15) -> bool:
        """Whether every dropped file was committed (sources leave the inbox only after their copies are durable)."""
        return wait_until(lambda: not any(path.is_file() for path in self.inbox.rglob("*")), timeout)


def wait_until(condition: Callable[[], bool], timeout: float = 15) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


class DaemonTestCase(unittest.TestCase):
    """A test with its own running docrouted in ``self.daemon``; :meth:`log_tail` for failure messages."""

    daemon: Daemon

    def setUp(self) -> None:
        self.daemon = Daemon()
        self.addCleanup(self.daemon.remove)
        self.daemon.start()

    def log_tail(self) -> str:
        return self.daemon.daemon_log()[-3000:]
