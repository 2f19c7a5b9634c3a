"""The asyncio API against a real docrouted: the main flow of a handler and of an opener."""

from __future__ import annotations

import asyncio
import os
import unittest
from pathlib import Path

import docroute
import docroute.aio
from harness import MOLECULES, PDB, TEXTVIEWER, TODOLIST, DaemonTestCase

TIMEOUT = 15.0


class AsyncConnectionTests(DaemonTestCase):
    async def next_event(self, connection: docroute.AsyncConnection) -> docroute.Event:
        event = await connection.next_event(timeout=TIMEOUT)
        self.assertIsNotNone(event, f"no event within {TIMEOUT} s\n{self.log_tail()}")
        assert event is not None
        return event

    def test_launch_open_url_ack_open_candidates_and_status(self) -> None:
        asyncio.run(self.main_flow())

    async def main_flow(self) -> None:
        self.daemon.drop("waiting.pdb", PDB)
        self.assertTrue(self.daemon.wait_for_inbox_drained(), self.log_tail())
        async with await docroute.aio.connect(self.daemon.socket, timeout=TIMEOUT) as handler:
            welcome = await handler.hello()
            self.assertTrue(welcome.offers(docroute.Feature.OPEN_DESCRIPTOR), welcome.features)
            self.assertEqual(await handler.subscribe(MOLECULES), 1)
            launch = await self.next_event(handler)
            assert isinstance(launch, docroute.Launch) and launch.delivery_id is not None and launch.path is not None
            self.assertEqual(launch.content_type, "com.sunsetlakesoftware.molecules.pdb")
            self.assertEqual(launch.source_application, "com.apple.mobilemail")
            self.assertEqual(Path(launch.path).read_bytes(), PDB)
            await handler.ack(launch.delivery_id, handled=True)

            self.daemon.drop("arrived.pdb", PDB)
            arrived = await self.next_event(handler)
            assert isinstance(arrived, docroute.OpenURL) and arrived.path is not None
            self.assertEqual(arrived.path, str(self.daemon.sandbox(MOLECULES) / "arrived.pdb"))
            self.assertEqual(Path(arrived.path).read_bytes(), PDB)
            await handler.ack(arrived.delivery_id, handled=False)

            async with await docroute.aio.connect(self.daemon.socket, timeout=TIMEOUT) as opener:
                # Requests on one connection may run at once; each gets its own reply.
                status, listed, scheme = await asyncio.gather(
                    opener.status(), opener.candidates_for_file(launch.path), opener.candidates("todolist://x")
                )
                entry = status.handler(MOLECULES)
                assert entry is not None
                self.assertTrue(entry.subscribed)
                self.assertEqual(entry.pending, 0, "both were acknowledged (one declined)")
                self.assertEqual(status.raw["ledger"][MOLECULES].get("declined"), 1, status.raw["ledger"])
                self.assertEqual(listed.candidates[0].bundle_identifier, MOLECULES)
                self.assertTrue(listed.candidates[0].is_default)
                self.assertEqual(scheme.candidates[0].bundle_identifier, TODOLIST)

                source = self.daemon.root / "passed.pdb"
                source.write_bytes(PDB)
                descriptor = os.open(source, os.O_RDONLY)
                try:
                    source.unlink()
                    opened = await opener.open_descriptor(descriptor, "passed.pdb", bundle_identifier=TEXTVIEWER)
                finally:
                    os.close(descriptor)
                self.assertEqual(opened.bundle_identifier, TEXTVIEWER)
                self.assertEqual((self.daemon.sandbox(TEXTVIEWER, "Shared") / "passed.pdb").read_bytes(), PDB)

                mine = await opener.open_file(self.daemon.sandbox(MOLECULES) / "arrived.pdb", mailbox="Again")
                live = await self.next_event(handler)
                assert isinstance(live, docroute.OpenURL)
                self.assertEqual((live.delivery_id, live.mailbox), (mine.delivery_id, "Again"))
                await handler.ack(live.delivery_id, handled=True)

                with self.assertRaises(docroute.DocRouteError) as unknown:
                    await opener.subscribe("org.example.nobody")
                self.assertEqual(unknown.exception.code, docroute.ErrorCode.UNKNOWN_HANDLER)
                self.assertTrue(unknown.exception.from_daemon)

        # Closed by this side: events end without error, requests fail.
        async for _ in handler.events():
            self.fail("no event after close")
        with self.assertRaises(docroute.DocRouteError) as closed:
            await handler.status()
        self.assertEqual(closed.exception.code, docroute.ErrorCode.CONNECTION_CLOSED)

    def test_a_pending_request_fails_when_the_daemon_goes_away(self) -> None:
        async def scenario() -> None:
            connection = await docroute.aio.connect(self.daemon.socket)
            self.assertEqual(await connection.subscribe(MOLECULES), 0)
            self.assertIsInstance(await self.next_event(connection), docroute.Launch)
            self.daemon.stop()
            with self.assertRaises(docroute.DocRouteError) as ended:
                async for _ in connection.events():
                    pass
            self.assertEqual(ended.exception.code, docroute.ErrorCode.CONNECTION_CLOSED)
            with self.assertRaises(docroute.DocRouteError) as request:
                await connection.hello()
            self.assertEqual(request.exception.code, docroute.ErrorCode.CONNECTION_CLOSED)
            await connection.close()

        asyncio.run(scenario())


if __name__ == "__main__":
    unittest.main()
