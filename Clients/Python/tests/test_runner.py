"""HandlerRunner and AsyncHandlerRunner against a real docrouted: delegate calls, acks, reconnects."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import threading
import time
import unittest
from collections.abc import Callable
from pathlib import Path

import docroute
from harness import MOLECULES, PDB, REPOSITORY, DaemonTestCase, wait_until

FAST = docroute.ReconnectBackoff(initial=0.05, maximum=0.2)


class Recorder(docroute.DocumentHandler):
    """Takes every document but one named ``decline.pdb``; records what it saw and the bytes."""

    def __init__(self) -> None:
        self.launches: list[docroute.Launch] = []
        self.documents: list[docroute.Document] = []
        self.contents: dict[str, bytes] = {}
        self.lock = threading.Lock()

    def did_finish_launching(self, launch: docroute.Launch) -> bool:
        with self.lock:
            self.launches.append(launch)
        return super().did_finish_launching(launch)

    def open_url(self, url: str, source_application: str | None, annotation: docroute.wire.JSONObject) -> bool:
        path = docroute.path_from_file_url(url)
        with self.lock:
            self.contents[Path(path).name] = Path(path).read_bytes()
        return annotation.get("originalFilename") != "decline.pdb"

    def open_document(self, document: docroute.Document) -> bool:
        with self.lock:
            self.documents.append(document)
        return super().open_document(document)

    def names(self) -> list[str]:
        with self.lock:
            return [str(document.annotation.get("originalFilename")) for document in self.documents]


class HandlerRunnerTests(DaemonTestCase):
    def start_runner(self, handler: docroute.DocumentHandler) -> tuple[docroute.HandlerRunner, threading.Thread, list[BaseException]]:
        runner = docroute.HandlerRunner(MOLECULES, handler, socket_path=self.daemon.socket, backoff=FAST)
        failures: list[BaseException] = []

        def run() -> None:
            try:
                runner.run()
            except BaseException as error:  # reported by the test, not lost in the thread
                failures.append(error)

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        self.addCleanup(thread.join, 10)
        self.addCleanup(runner.stop)
        return runner, thread, failures

    def test_documents_reach_the_delegate_are_acknowledged_and_survive_a_daemon_restart(self) -> None:
        self.daemon.drop("waiting.pdb", PDB)
        self.assertTrue(self.daemon.wait_for_inbox_drained(), self.log_tail())
        handler = Recorder()
        runner, thread, failures = self.start_runner(handler)
        self.daemon.drop("decline.pdb", PDB)
        self.assertTrue(wait_until(lambda: handler.names() == ["waiting.pdb", "decline.pdb"]), (handler.names(), self.log_tail()))
        self.assertEqual(handler.contents["waiting.pdb"], PDB)
        self.assertFalse(handler.launches[0].is_plain, "the waiting document came with the launch")

        # docrouted restarts; the runner connects again and gets what arrives next, nothing twice.
        self.assertTrue(wait_until(lambda: self.status_pending() == 0), self.log_tail())
        self.daemon.stop()
        self.daemon.start()
        self.assertTrue(wait_until(lambda: len(handler.launches) == 2), self.log_tail())
        self.daemon.drop("after-restart.pdb", PDB)
        self.assertTrue(wait_until(lambda: "after-restart.pdb" in handler.names()), (handler.names(), self.log_tail()))
        self.assertEqual(handler.names(), ["waiting.pdb", "decline.pdb", "after-restart.pdb"])
        self.assertEqual(len(handler.launches), 2, "one launch per subscription")
        self.assertTrue(handler.launches[1].is_plain)

        runner.stop()
        thread.join(10)
        self.assertFalse(thread.is_alive(), "stop() makes run() return")
        self.assertEqual(failures, [])
        with docroute.connect(self.daemon.socket, timeout=10) as connection:
            ledger = connection.status().raw["ledger"][MOLECULES]
        self.assertEqual((ledger.get("acknowledged"), ledger.get("declined")), (2, 1), ledger)

    def status_pending(self) -> int:
        with docroute.connect(self.daemon.socket, timeout=10) as connection:
            entry = connection.status().handler(MOLECULES)
        return -1 if entry is None else entry.pending + int(entry.extra.get("inFlight", 0))

    def test_stop_from_a_signal_handler_ends_a_blocked_run(self) -> None:
        handler = Recorder()
        runner = docroute.HandlerRunner(MOLECULES, handler, socket_path=self.daemon.socket, backoff=FAST)
        previous = signal.signal(signal.SIGALRM, lambda number, frame: runner.stop())
        self.addCleanup(signal.signal, signal.SIGALRM, previous)
        # Once subscribed the runner waits in recv for the next event; the signal must end that wait.
        self.daemon.drop("before-stop.pdb", PDB)
        self.assertTrue(self.daemon.wait_for_inbox_drained(), self.log_tail())
        signal.setitimer(signal.ITIMER_REAL, 1.0)
        self.addCleanup(signal.setitimer, signal.ITIMER_REAL, 0)
        # Should the signal not end it, stopping from another thread does, and the time says so.
        watchdog = threading.Timer(10, runner.stop)
        watchdog.start()
        self.addCleanup(watchdog.cancel)
        started = time.monotonic()
        runner.run()
        self.assertLess(time.monotonic() - started, 5)
        self.assertEqual(handler.names(), ["before-stop.pdb"])

    def test_an_unknown_handler_ends_run_with_the_error(self) -> None:
        runner = docroute.HandlerRunner("org.example.nobody", docroute.DocumentHandler(), socket_path=self.daemon.socket, backoff=FAST)
        with self.assertRaises(docroute.DocRouteError) as refused:
            runner.run()
        self.assertEqual(refused.exception.code, docroute.ErrorCode.UNKNOWN_HANDLER)

    def test_the_async_runner_feeds_its_delegate_and_reconnects(self) -> None:
        seen: list[str] = []

        class Handler(docroute.AsyncDocumentHandler):
            async def handle_open_url(self, url: str) -> bool:
                seen.append(Path(docroute.path_from_file_url(url)).name)
                return True

        async def scenario() -> None:
            runner = docroute.AsyncHandlerRunner(MOLECULES, Handler(), socket_path=self.daemon.socket, backoff=FAST)
            task = asyncio.create_task(runner.run())
            try:
                self.daemon.drop("one.pdb", PDB)
                await self.until(lambda: seen == ["one.pdb"])
                await asyncio.to_thread(self.daemon.stop)
                await asyncio.to_thread(self.daemon.start)
                self.daemon.drop("two.pdb", PDB)
                await self.until(lambda: seen == ["one.pdb", "two.pdb"])
            finally:
                task.cancel()
                with self.assertRaises(asyncio.CancelledError):
                    await task

        asyncio.run(scenario())
        self.assertEqual(seen, ["one.pdb", "two.pdb"])

    async def until(self, condition: Callable[[], bool], timeout: float = 15) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not condition():
            if loop.time() > deadline:
                self.fail(f"not reached within {timeout} s\n{self.log_tail()}")
            await asyncio.sleep(0.01)


class ExampleHandlerTests(DaemonTestCase):
    """examples/python/handler.py, run with the Python that has the package installed."""

    def test_the_example_takes_documents_and_lists_and_opens_in(self) -> None:
        self.daemon.drop("example.pdb", PDB)
        self.assertTrue(self.daemon.wait_for_inbox_drained(), self.log_tail())
        example = str(REPOSITORY / "examples" / "python" / "handler.py")
        subscribed = subprocess.run(
            [sys.executable, example, "--socket", self.daemon.socket, "--bundle", MOLECULES, "--count", "1"],
            capture_output=True, text=True, timeout=30,
        )
        self.assertEqual(subscribed.returncode, 0, subscribed.stderr)
        copy = self.daemon.sandbox(MOLECULES) / "example.pdb"
        self.assertEqual(subscribed.stdout, f"launch {docroute.file_url(str(copy))} com.sunsetlakesoftware.molecules.pdb\n")
        listed = subprocess.run(
            [sys.executable, example, "--socket", self.daemon.socket, "--list", str(copy)], capture_output=True, text=True, timeout=30
        )
        self.assertEqual(listed.returncode, 0, listed.stderr)
        self.assertIn('"bundleIdentifier": "com.sunsetlakesoftware.molecules"', listed.stdout)
        refused = subprocess.run(
            [sys.executable, example, "--socket", self.daemon.socket, "--open", str(copy), "--with", "org.docroute.archiver"],
            capture_output=True, text=True, timeout=30,
        )
        self.assertEqual(refused.returncode, 1)
        self.assertIn('"code": "no-handler"', refused.stdout)
        with docroute.connect(self.daemon.socket, timeout=10) as connection:
            entry = connection.status().handler(MOLECULES)
        assert entry is not None
        self.assertEqual(entry.pending, 0, "the example acknowledged its document")


if __name__ == "__main__":
    unittest.main()
