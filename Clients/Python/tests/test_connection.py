"""The blocking API against a real docrouted."""

from __future__ import annotations

import os
import time
import unittest
from pathlib import Path
from unittest import mock

import docroute
from harness import MOLECULES, PDB, TEXTVIEWER, TODOLIST, DaemonTestCase, wait_until

TIMEOUT = 15.0


class ConnectionTests(DaemonTestCase):
    def connect(self) -> docroute.Connection:
        connection = docroute.connect(self.daemon.socket, timeout=TIMEOUT)
        self.addCleanup(connection.close)
        return connection

    def subscribe(self, bundle_identifier: str = MOLECULES) -> tuple[docroute.Connection, int]:
        """A new subscribed connection; waits while the daemon still holds a just-closed one as subscribed."""
        deadline = time.monotonic() + 5
        while True:
            connection = self.connect()
            try:
                return connection, connection.subscribe(bundle_identifier)
            except docroute.DocRouteError as error:
                connection.close()
                if error.code != docroute.ErrorCode.ALREADY_SUBSCRIBED or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def next_event(self, connection: docroute.Connection) -> docroute.Event:
        event = connection.next_event(timeout=TIMEOUT)
        self.assertIsNotNone(event, f"no event within {TIMEOUT} s\n{self.log_tail()}")
        assert event is not None
        return event

    def test_hello_names_the_daemon_its_features_and_the_descriptor_socket(self) -> None:
        welcome = self.connect().hello()
        self.assertEqual(welcome.protocol_version, 1)
        self.assertTrue(welcome.daemon.startswith("docrouted/"), welcome.daemon)
        for feature in (docroute.Feature.CANDIDATES, docroute.Feature.OPEN_WITH, docroute.Feature.OPEN_DESCRIPTOR):
            self.assertTrue(welcome.offers(feature), welcome.features)
        self.assertIsNotNone(welcome.descriptor_socket_path)
        assert welcome.descriptor_socket_path is not None
        self.assertEqual(os.path.dirname(welcome.descriptor_socket_path), os.path.dirname(self.daemon.socket))
        self.assertTrue(os.path.exists(welcome.descriptor_socket_path))

    def test_a_waiting_document_comes_as_launch_and_a_new_drop_as_open_url(self) -> None:
        self.daemon.drop("waiting.pdb", PDB)
        self.assertTrue(self.daemon.wait_for_inbox_drained(), self.log_tail())
        connection, pending = self.subscribe()
        self.assertEqual(pending, 1)

        launch = self.next_event(connection)
        self.assertIsInstance(launch, docroute.Launch)
        assert isinstance(launch, docroute.Launch)
        copy = self.daemon.sandbox(MOLECULES) / "waiting.pdb"
        self.assertFalse(launch.is_plain)
        self.assertEqual(launch.url, docroute.file_url(str(copy)))
        self.assertEqual(launch.launch_options[docroute.LaunchOptionsKey.URL], launch.url)
        self.assertTrue(launch.is_file_url)
        self.assertEqual(launch.content_type, "com.sunsetlakesoftware.molecules.pdb")
        self.assertEqual(launch.mailbox, "Inbox")
        self.assertEqual(launch.source_application, "com.apple.mobilemail")
        self.assertEqual(launch.annotation["originalFilename"], "waiting.pdb")
        self.assertEqual(launch.annotation["size"], len(PDB))
        self.assertEqual(launch.path, str(copy))
        assert launch.path is not None
        self.assertEqual(Path(launch.path).read_bytes(), PDB)
        assert launch.delivery_id is not None
        connection.ack(launch.delivery_id, handled=True)

        self.daemon.drop("arrived.pdb", PDB + b"REMARK new\n", mailbox="Mail")
        opened = self.next_event(connection)
        self.assertIsInstance(opened, docroute.OpenURL)
        assert isinstance(opened, docroute.OpenURL)
        self.assertNotEqual(opened.delivery_id, launch.delivery_id)
        self.assertTrue(opened.is_file_url)
        self.assertEqual(opened.mailbox, "Mail")
        self.assertEqual(opened.content_type, "com.sunsetlakesoftware.molecules.pdb")
        self.assertEqual(opened.source_application, "com.apple.mobilemail")
        self.assertEqual(opened.annotation["mailbox"], "Mail")
        self.assertEqual(opened.path, str(self.daemon.sandbox(MOLECULES, "Mail") / "arrived.pdb"))
        assert opened.path is not None
        self.assertEqual(Path(opened.path).read_bytes(), PDB + b"REMARK new\n")
        connection.ack(opened.delivery_id, handled=True)

    def test_acknowledged_documents_are_not_sent_again_after_a_reconnect(self) -> None:
        for name in ("first.pdb", "second.pdb"):
            self.daemon.drop(name, PDB)
            self.assertTrue(self.daemon.wait_for_inbox_drained(), self.log_tail())
        connection, pending = self.subscribe()
        self.assertEqual(pending, 2)
        first = self.next_event(connection)
        second = self.next_event(connection)
        assert isinstance(first, docroute.Launch) and first.delivery_id is not None
        assert isinstance(second, docroute.OpenURL)
        self.assertTrue(first.url is not None and first.url.endswith("/first.pdb"), first.url)
        self.assertTrue(second.url.endswith("/second.pdb"), second.url)
        # Only the first is acknowledged; a later request makes the ack durable before hanging up.
        connection.ack(first.delivery_id, handled=True)
        connection.hello()
        connection.close()

        connection, pending = self.subscribe()
        self.assertEqual(pending, 1)
        again = self.next_event(connection)
        assert isinstance(again, docroute.Launch)
        self.assertEqual(again.delivery_id, second.delivery_id, "the unacknowledged one comes again, as launch")
        self.assertIsNone(connection.next_event(timeout=0.5), "the acknowledged one never comes again")
        assert again.delivery_id is not None
        connection.ack(again.delivery_id, handled=True)
        connection.hello()
        connection.close()

        connection, pending = self.subscribe()
        self.assertEqual(pending, 0)
        plain = self.next_event(connection)
        assert isinstance(plain, docroute.Launch)
        self.assertTrue(plain.is_plain)
        self.assertEqual(plain.launch_options, {})
        self.assertIsNone(plain.delivery_id)

    def test_a_declined_document_is_not_sent_again(self) -> None:
        self.daemon.drop("declined.pdb", PDB)
        self.assertTrue(self.daemon.wait_for_inbox_drained(), self.log_tail())
        connection, _ = self.subscribe()
        launch = self.next_event(connection)
        assert isinstance(launch, docroute.Launch) and launch.delivery_id is not None
        connection.ack(launch.delivery_id, handled=False)
        ledger = connection.status().raw.get("ledger", {}).get(MOLECULES, {})
        self.assertEqual(ledger.get("declined"), 1, ledger)
        connection.close()

        connection, pending = self.subscribe()
        self.assertEqual(pending, 0)
        plain = self.next_event(connection)
        assert isinstance(plain, docroute.Launch)
        self.assertTrue(plain.is_plain)

    def test_competing_connections_share_documents_and_a_single_one_is_refused(self) -> None:
        first = self.connect()
        self.assertEqual(first.subscribe(MOLECULES, compete=True), 0)
        second = self.connect()
        self.assertEqual(second.subscribe(MOLECULES, compete=True), 0)
        for connection in (first, second):
            plain = self.next_event(connection)
            assert isinstance(plain, docroute.Launch)
            self.assertTrue(plain.is_plain)
        alone = self.connect()
        with self.assertRaises(docroute.DocRouteError) as refused:
            alone.subscribe(MOLECULES)
        self.assertEqual(refused.exception.code, docroute.ErrorCode.ALREADY_SUBSCRIBED)
        self.assertIn('"compete":true', refused.exception.message)
        entry = self.connect().status().handler(MOLECULES)
        assert entry is not None
        self.assertEqual(entry.instances, 2)

        # Two documents, neither acknowledged: one to each, to the one with fewer in flight.
        self.daemon.drop("one.pdb", PDB)
        self.daemon.drop("two.pdb", PDB + b"REMARK two\n")
        names = set()
        for connection in (first, second):
            event = self.next_event(connection)
            assert isinstance(event, docroute.OpenURL)
            names.add(Path(event.path).name)
        self.assertEqual(names, {"one.pdb", "two.pdb"})

    def test_an_ack_for_an_unknown_delivery_arrives_as_an_error_event(self) -> None:
        connection, _ = self.subscribe()
        plain = self.next_event(connection)
        self.assertIsInstance(plain, docroute.Launch)
        connection.ack("no-such-delivery", handled=True)
        failed = self.next_event(connection)
        assert isinstance(failed, docroute.DaemonErrorEvent)
        self.assertEqual(failed.error.code, docroute.ErrorCode.NOT_FOUND)
        self.assertEqual(failed.error.request_id, "ack:no-such-delivery")
        self.assertTrue(failed.error.from_daemon)

    def test_open_of_a_url_scheme_reaches_its_handler(self) -> None:
        url = "todolist://www.acme.com?Quarterly%20Report#200806231300"
        opened = self.connect().open(url)
        self.assertEqual(opened.bundle_identifier, TODOLIST)
        self.assertIsNone(opened.content_type)
        connection, pending = self.subscribe(TODOLIST)
        self.assertEqual(pending, 1)
        launch = self.next_event(connection)
        assert isinstance(launch, docroute.Launch)
        self.assertEqual(launch.url, url)
        self.assertEqual(launch.delivery_id, opened.delivery_id)
        self.assertFalse(launch.is_file_url)
        self.assertIsNone(launch.content_type)
        self.assertIsNone(launch.mailbox)
        self.assertIsNone(launch.path)

        second = self.connect().open("todolist://www.acme.com?Later")
        live = self.next_event(connection)
        assert isinstance(live, docroute.OpenURL)
        self.assertEqual((live.delivery_id, live.url, live.is_file_url), (second.delivery_id, "todolist://www.acme.com?Later", False))

    def test_open_by_descriptor_copies_a_file_no_path_names_any_more(self) -> None:
        source = self.daemon.root / "private" / "1abc.pdb"
        source.parent.mkdir()
        source.write_bytes(PDB)
        descriptor = os.open(source, os.O_RDONLY)
        self.addCleanup(os.close, descriptor)
        # Gone from every folder: only the passed descriptor can give the daemon its bytes.
        source.unlink()
        opened = self.connect().open_descriptor(descriptor, "1abc.pdb", mailbox="Lab", bundle_identifier=TEXTVIEWER)
        self.assertEqual(opened.bundle_identifier, TEXTVIEWER)
        self.assertEqual(opened.content_type, "com.sunsetlakesoftware.molecules.pdb")
        self.assertEqual((self.daemon.sandbox(TEXTVIEWER, "Lab") / "1abc.pdb").read_bytes(), PDB)
        # The descriptor stays the caller's, still open.
        self.assertEqual(os.pread(descriptor, 6, 0), b"HEADER")

    def test_open_file_and_open_by_file_url_copy_it_into_the_sandbox(self) -> None:
        source = self.daemon.root / "report.pdb"
        source.write_bytes(PDB)
        opened = self.connect().open_file(source)
        self.assertEqual(opened.bundle_identifier, MOLECULES)
        self.assertEqual((self.daemon.sandbox(MOLECULES, "Shared") / "report.pdb").read_bytes(), PDB)
        by_url = self.connect().open(docroute.file_url(str(source)), mailbox="ByURL", bundle_identifier=TEXTVIEWER)
        self.assertEqual((by_url.bundle_identifier, by_url.content_type), (TEXTVIEWER, "com.sunsetlakesoftware.molecules.pdb"))
        self.assertEqual((self.daemon.sandbox(TEXTVIEWER, "ByURL") / "report.pdb").read_bytes(), PDB)
        with self.assertRaises(docroute.DocRouteError) as missing:
            self.connect().open_file(self.daemon.root / "missing.pdb")
        self.assertEqual(missing.exception.code, docroute.ErrorCode.FILE_NOT_OPENED)
        self.assertIn("does not exist", missing.exception.message)

    def test_candidates_list_every_handler_best_first(self) -> None:
        source = self.daemon.root / "1abc.pdb"
        source.write_bytes(PDB)
        connection = self.connect()
        for listed in (connection.candidates_for_file(source), connection.candidates(docroute.file_url(str(source)))):
            self.assertEqual(listed.content_type, "com.sunsetlakesoftware.molecules.pdb")
            self.assertEqual(listed.candidates[0].bundle_identifier, MOLECULES)
            self.assertTrue(listed.candidates[0].is_default)
            self.assertEqual(listed.default, listed.candidates[0])
            self.assertIn(TEXTVIEWER, [candidate.bundle_identifier for candidate in listed.candidates])
            self.assertEqual(sum(candidate.is_default for candidate in listed.candidates), 1)
        scheme = connection.candidates("todolist://www.acme.com?x")
        self.assertIsNone(scheme.content_type)
        self.assertEqual([(c.bundle_identifier, c.matched_type) for c in scheme.candidates], [(TODOLIST, "todolist")])
        self.assertFalse((self.daemon.sandbox(MOLECULES, "Shared") / "1abc.pdb").exists(), "candidates copies nothing")

    def test_status_shows_handlers_and_inboxes(self) -> None:
        self.daemon.drop("waiting.txt", b"plain text\n")
        self.assertTrue(self.daemon.wait_for_inbox_drained(), self.log_tail())
        subscriber, _ = self.subscribe()
        status = self.connect().status()
        molecules = status.handler(MOLECULES)
        textviewer = status.handler(TEXTVIEWER)
        assert molecules is not None and textviewer is not None
        self.assertTrue(molecules.subscribed)
        self.assertFalse(textviewer.subscribed)
        self.assertEqual(textviewer.pending, 1)
        self.assertEqual((molecules.instances, textviewer.instances), (1, 0))
        self.assertIsNone(molecules.hosts, "no fleet: no hosts")
        self.assertEqual([inbox.path for inbox in status.inboxes], [str(self.daemon.inbox)])
        self.assertIn("Inbox", status.inboxes[0].mailboxes)
        self.assertEqual(status.inboxes[0].extra.get("kind"), "directory")
        self.assertTrue(str(status.raw.get("daemon", "")).startswith("docrouted"), status.raw.keys())
        subscriber.close()

    def test_daemon_errors_raise_with_their_code(self) -> None:
        connection = self.connect()
        with self.assertRaises(docroute.DocRouteError) as unknown:
            connection.subscribe("org.example.nobody")
        self.assertEqual(unknown.exception.code, docroute.ErrorCode.UNKNOWN_HANDLER)
        self.assertTrue(unknown.exception.from_daemon)
        self.assertIn("org.example.nobody", unknown.exception.message)
        self.assertIsNotNone(unknown.exception.request_id)
        # The connection stays usable after an error reply.
        with self.assertRaises(docroute.DocRouteError) as refused:
            connection.open("todolist://x", bundle_identifier="org.docroute.archiver")
        self.assertEqual(refused.exception.code, docroute.ErrorCode.NO_HANDLER)
        with self.assertRaises(docroute.DocRouteError) as scheme:
            connection.open("nobody-claims-this://x")
        self.assertEqual(scheme.exception.code, docroute.ErrorCode.NO_HANDLER)
        self.assertEqual(connection.hello().protocol_version, 1)

    def test_connect_uses_docroute_socket_and_says_when_nothing_listens(self) -> None:
        with mock.patch.dict(os.environ, {"DOCROUTE_SOCKET": self.daemon.socket}):
            with docroute.connect(timeout=TIMEOUT) as connection:
                self.assertEqual(connection.socket_path, self.daemon.socket)
                self.assertEqual(connection.hello().protocol_version, 1)
        with mock.patch.dict(os.environ, {"DOCROUTE_SOCKET": str(self.daemon.root / "nothing.sock")}):
            with self.assertRaises(docroute.DocRouteError) as failed:
                docroute.connect()
        self.assertEqual(failed.exception.code, docroute.ErrorCode.CONNECT_FAILED)
        self.assertIn("nothing.sock", failed.exception.message)

    def test_events_end_with_connection_closed_when_the_daemon_stops(self) -> None:
        connection, _ = self.subscribe()
        self.assertIsInstance(self.next_event(connection), docroute.Launch)
        self.daemon.stop()
        with self.assertRaises(docroute.DocRouteError) as ended:
            for _ in connection.events():
                pass
        self.assertEqual(ended.exception.code, docroute.ErrorCode.CONNECTION_CLOSED)
        self.assertTrue(wait_until(lambda: connection.closed, 1))


if __name__ == "__main__":
    unittest.main()
