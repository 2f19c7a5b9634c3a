"""A handler's loop: stay subscribed, pass each document to the handler, acknowledge its answer.

Shaped like an iOS app's delegate: :meth:`DocumentHandler.did_finish_launching` once per
subscription, then :meth:`DocumentHandler.open_url` for every other document, each answered
with ``True`` (taken) or ``False`` (declined, like ``openURL`` returning ``NO``).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import dataclass

from .aio import AsyncConnection
from .connection import Connection
from .errors import FINAL_HANDLER_CODES, DocRouteError
from .messages import DaemonErrorEvent, Document, Event, Launch
from .wire import JSONObject, logger


@dataclass(frozen=True)
class ReconnectBackoff:
    """How long a runner waits before connecting again: doubling from ``initial`` up to
    ``maximum`` seconds, starting over after each successful subscription."""

    initial: float = 0.1
    maximum: float = 5.0

    def __post_init__(self) -> None:
        if not 0 < self.initial <= self.maximum:
            raise ValueError("a backoff needs 0 < initial <= maximum")

    def delay(self, failures: int) -> float:
        """The wait after ``failures`` failures in a row (1 for the first)."""
        # The exponent is capped: a daemon down for hours must not overflow the float.
        return min(self.initial * 2.0 ** min(max(failures - 1, 0), 64), self.maximum)


class DocumentHandler:
    """What a synchronous handler implements; subclass it and override what you need.

    Implement :meth:`open_url` (or the older :meth:`handle_open_url`, which the default
    :meth:`open_url` calls, as UIKit does). :meth:`open_document` receives everything the daemon
    sent (delivery ID, content type, mailbox) and by default calls :meth:`open_url`.
    """

    def did_finish_launching(self, launch: Launch) -> bool:
        """`application:didFinishLaunchingWithOptions:`, once per subscription, first.

        The default passes the launch's document (the oldest that was waiting) to
        :meth:`open_document` and returns its answer; a plain launch returns ``True`` (unused).
        """
        return True if launch.document is None else self.open_document(launch.document)

    def open_document(self, document: Document) -> bool:
        """Every document after the launch; ``True`` takes it, ``False`` declines it."""
        return self.open_url(document.url, document.source_application, document.annotation)

    def open_url(self, url: str, source_application: str | None, annotation: JSONObject) -> bool:
        """`application:openURL:sourceApplication:annotation:`; the default calls :meth:`handle_open_url`."""
        return self.handle_open_url(url)

    def handle_open_url(self, url: str) -> bool:
        """`application:handleOpenURL:`, the older method; the default declines."""
        return False


class AsyncDocumentHandler:
    """:class:`DocumentHandler` for :class:`AsyncHandlerRunner`: the same methods, as coroutines."""

    async def did_finish_launching(self, launch: Launch) -> bool:
        """Once per subscription, first; the default passes its document to :meth:`open_document`."""
        return True if launch.document is None else await self.open_document(launch.document)

    async def open_document(self, document: Document) -> bool:
        """Every document after the launch; the default calls :meth:`open_url`."""
        return await self.open_url(document.url, document.source_application, document.annotation)

    async def open_url(self, url: str, source_application: str | None, annotation: JSONObject) -> bool:
        """The default calls :meth:`handle_open_url`."""
        return await self.handle_open_url(url)

    async def handle_open_url(self, url: str) -> bool:
        """The older method; the default declines."""
        return False


def _is_final(error: DocRouteError) -> bool:
    return error.from_daemon and error.code in FINAL_HANDLER_CODES


class HandlerRunner:
    """Keeps a handler subscribed and feeds it, like the system running an iOS app (blocking).

    :meth:`run` connects, says `hello`, subscribes, and passes each event to the handler,
    acknowledging every document with its answer. When the daemon goes away it connects again
    after a :class:`ReconnectBackoff`; documents not yet acknowledged then come again, so a
    handler should drop a ``delivery_id`` it has seen. An exception from the handler ends
    :meth:`run` with it, the document unacknowledged (it comes again on the next run).
    """

    def __init__(
        self,
        bundle_identifier: str,
        handler: DocumentHandler,
        *,
        socket_path: str | None = None,
        backoff: ReconnectBackoff = ReconnectBackoff(),
        log: logging.Logger | None = None,
    ) -> None:
        self.bundle_identifier = bundle_identifier
        self.handler = handler
        self.socket_path = socket_path
        self.backoff = backoff
        self._log = log or logger
        self._stopping = threading.Event()
        self._connection: Connection | None = None
        self._failures = 0
        self._running_thread: int | None = None
        self._handling = False

    def run(self) -> None:
        """Runs until :meth:`stop` (then returns) or until the daemon refuses the handler for good
        (then raises :class:`~docroute.DocRouteError`): `unknown-handler`, `not-permitted`,
        `unsupported-protocol`, `bad-request`. Everything else is retried."""
        self._failures = 0
        self._running_thread = threading.get_ident()
        while not self._stopping.is_set():
            try:
                self._serve_one_connection()
            except DocRouteError as error:
                if _is_final(error):
                    self._log.error("docrouted refused handler %s: %s", self.bundle_identifier, error)
                    raise
                self._log.info("connection to docrouted lost (%s); connecting again", error)
            self._failures += 1
            self._stopping.wait(self.backoff.delay(self._failures))

    def stop(self) -> None:
        """Makes :meth:`run` return. From the handler's own methods it returns once the current
        document is acknowledged; from another thread or a signal handler at once (a document
        being handled then comes again)."""
        self._stopping.set()
        if self._handling and threading.get_ident() == self._running_thread:
            return
        # No lock: a signal handler may run while this thread holds one. Shutting down a socket
        # object already closed only raises, which shutdown() ignores.
        connection = self._connection
        if connection is not None:
            connection.shutdown()

    def _serve_one_connection(self) -> None:
        connection = Connection.connect(self.socket_path, log=self._log)
        self._connection = connection
        try:
            if self._stopping.is_set():
                return
            welcome = connection.hello()
            pending = connection.subscribe(self.bundle_identifier)
            self._failures = 0
            self._log.info("subscribed as %s to %s, %d waiting", self.bundle_identifier, welcome.daemon, pending)
            for event in connection.events():
                self._handling = True
                try:
                    self._handle(event, connection)
                finally:
                    self._handling = False
                if self._stopping.is_set():
                    return
        finally:
            self._connection = None
            connection.close()

    def _handle(self, event: Event, connection: Connection) -> None:
        if isinstance(event, Launch):
            handled = self.handler.did_finish_launching(event)
            if event.delivery_id is not None:
                connection.ack(event.delivery_id, handled)
        elif isinstance(event, DaemonErrorEvent):
            self._log.warning("docrouted reported an error: %s", event.error)
        else:
            connection.ack(event.delivery_id, self.handler.open_document(event))


class AsyncHandlerRunner:
    """:class:`HandlerRunner` for asyncio: ``await runner.run()``; cancel its task to stop it."""

    def __init__(
        self,
        bundle_identifier: str,
        handler: AsyncDocumentHandler,
        *,
        socket_path: str | None = None,
        backoff: ReconnectBackoff = ReconnectBackoff(),
        log: logging.Logger | None = None,
    ) -> None:
        self.bundle_identifier = bundle_identifier
        self.handler = handler
        self.socket_path = socket_path
        self.backoff = backoff
        self._log = log or logger
        self._failures = 0

    async def run(self) -> None:
        """Runs until cancelled, or until the daemon refuses the handler for good (then raises)."""
        self._failures = 0
        while True:
            try:
                await self._serve_one_connection()
            except DocRouteError as error:
                if _is_final(error):
                    self._log.error("docrouted refused handler %s: %s", self.bundle_identifier, error)
                    raise
                self._log.info("connection to docrouted lost (%s); connecting again", error)
            self._failures += 1
            await asyncio.sleep(self.backoff.delay(self._failures))

    async def _serve_one_connection(self) -> None:
        connection = await AsyncConnection.connect(self.socket_path, log=self._log)
        try:
            welcome = await connection.hello()
            pending = await connection.subscribe(self.bundle_identifier)
            self._failures = 0
            self._log.info("subscribed as %s to %s, %d waiting", self.bundle_identifier, welcome.daemon, pending)
            async for event in connection.events():
                await self._handle(event, connection)
        finally:
            await connection.close()

    async def _handle(self, event: Event, connection: AsyncConnection) -> None:
        if isinstance(event, Launch):
            handled = await self.handler.did_finish_launching(event)
            if event.delivery_id is not None:
                await connection.ack(event.delivery_id, handled)
        elif isinstance(event, DaemonErrorEvent):
            self._log.warning("docrouted reported an error: %s", event.error)
        else:
            await connection.ack(event.delivery_id, await self.handler.open_document(event))
