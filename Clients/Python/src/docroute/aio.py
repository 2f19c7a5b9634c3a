"""The asyncio connection to docrouted: the same requests and events as :class:`~docroute.Connection`."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator
from types import TracebackType

from . import requests
from .descriptor import exchange, open_for_reading
from .errors import DocRouteError, ErrorCode
from .fileurl import file_url
from .messages import (
    CandidateList,
    DaemonErrorEvent,
    Event,
    OpenedDocument,
    StatusReport,
    Welcome,
    candidates_from,
    error_from,
    event_from,
    expect,
    opened_from,
    status_from,
    welcome_from,
)
from .wire import PROTOCOL_VERSION, Feature, JSONObject, LineFramer, decode_line, default_socket_path, encode_line, logger


async def connect(
    socket_path: str | None = None, *, timeout: float | None = None, log: logging.Logger | None = None
) -> AsyncConnection:
    """Connects to docrouted (``$DOCROUTE_SOCKET``, else ``/run/docroute/docroute.sock``)."""
    return await AsyncConnection.connect(socket_path, timeout=timeout, log=log)


class _End:
    """Put on the event queue when the connection ends, after every event that came before it."""


class AsyncConnection:
    """One connection to docrouted for asyncio programs.

    A task reads the socket for the connection's whole life: replies go to the request waiting
    for their `id` (requests may run concurrently), events to :meth:`events`. ``timeout``
    bounds each request's wait (``None``: no bound).

    >>> async with await docroute.aio.connect() as connection:
    ...     await connection.subscribe("com.sunsetlakesoftware.molecules")
    ...     async for event in connection.events():
    ...         if isinstance(event, (docroute.Launch, docroute.OpenURL)) and event.delivery_id is not None:
    ...             await connection.ack(event.delivery_id, handled=True)
    """

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        socket_path: str,
        *,
        timeout: float | None = None,
        log: logging.Logger | None = None,
    ) -> None:
        self.socket_path = socket_path
        """The socket this connection was made to."""
        self.timeout = timeout
        self._reader = reader
        self._writer = writer
        self._log = log or logger
        self._pending: dict[str, asyncio.Future[JSONObject]] = {}
        self._events: asyncio.Queue[Event | _End] = asyncio.Queue()
        self._welcome: Welcome | None = None
        self._last_id = 0
        self._ended: DocRouteError | None = None
        self._closed_by_us = False
        self._unsolicited_error: DocRouteError | None = None
        self._write_lock = asyncio.Lock()
        self._reading = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def connect(
        cls, socket_path: str | None = None, *, timeout: float | None = None, log: logging.Logger | None = None
    ) -> AsyncConnection:
        """Connects to docrouted (``$DOCROUTE_SOCKET``, else ``/run/docroute/docroute.sock``)."""
        path = socket_path if socket_path is not None else default_socket_path()
        try:
            reader, writer = await asyncio.open_unix_connection(path)
        except OSError as error:
            raise DocRouteError(
                ErrorCode.CONNECT_FAILED,
                f"cannot connect to docrouted at {path}: {error.strerror or error}; check that docroute.socket is "
                "active, or set DOCROUTE_SOCKET to the daemon's socket",
            ) from error
        return cls(reader, writer, path, timeout=timeout, log=log)

    # Lifecycle

    async def __aenter__(self) -> AsyncConnection:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Closes the connection: pending requests fail with `connection-closed`, :meth:`events` ends."""
        self._closed_by_us = True
        self._writer.close()
        try:
            await self._writer.wait_closed()
        except OSError:
            pass  # the daemon hung up first: closed either way
        await self._reading

    @property
    def closed(self) -> bool:
        """Whether the connection has ended, on either side."""
        return self._ended is not None

    # Requests

    async def hello(self, protocol_version: int = PROTOCOL_VERSION) -> Welcome:
        """Sends `hello` and returns the daemon's `welcome` (features, descriptor socket)."""
        reply = await self._request(requests.hello(protocol_version), "welcome")
        self._welcome = welcome_from(reply, self.socket_path)
        return self._welcome

    async def welcome(self) -> Welcome:
        """The `welcome` already received, else asked for now."""
        return self._welcome if self._welcome is not None else await self.hello()

    async def offers(self, feature: str) -> bool:
        """Whether the daemon serves a :class:`~docroute.Feature` (asks for `welcome` once if needed)."""
        return (await self.welcome()).offers(feature)

    async def subscribe(self, bundle_identifier: str, *, compete: bool = False) -> int:
        """Becomes that handler's live connection (with ``compete=True``, one of its competing
        connections); returns how many documents are waiting."""
        reply = await self._request(requests.subscribe(bundle_identifier, compete), "subscribed")
        pending = reply.get("pending")
        return pending if isinstance(pending, int) else 0

    async def ack(self, delivery_id: str, handled: bool = True) -> None:
        """Acknowledges a delivery (``handled=False`` declines it); a failure arrives on :meth:`events`."""
        await self._send(requests.ack(delivery_id, handled))

    async def open(self, url: str, *, mailbox: str | None = None, bundle_identifier: str | None = None) -> OpenedDocument:
        """Routes a URL (custom scheme, or ``file://``) to its handler, or to ``bundle_identifier`` (Open In…)."""
        return opened_from(await self._request(requests.open_url(url, mailbox, bundle_identifier), "opened"))

    async def open_descriptor(
        self, descriptor: int, name: str, *, mailbox: str | None = None, bundle_identifier: str | None = None
    ) -> OpenedDocument:
        """Opens a file by passing its open descriptor; the descriptor stays the caller's to close."""
        message = requests.open_descriptor(name, mailbox, bundle_identifier)
        return opened_from(await self._pass(descriptor, message, "opened"))

    async def open_file(
        self, path: str | os.PathLike[str], *, mailbox: str | None = None, bundle_identifier: str | None = None
    ) -> OpenedDocument:
        """Opens the file at ``path``: as a descriptor whenever offered, else by its ``file://`` URL."""
        absolute = requests.absolute(path)
        if await self.offers(Feature.OPEN_DESCRIPTOR):
            descriptor = open_for_reading(absolute)
            try:
                return await self.open_descriptor(descriptor, absolute, mailbox=mailbox, bundle_identifier=bundle_identifier)
            finally:
                os.close(descriptor)
        return await self.open(file_url(absolute), mailbox=mailbox, bundle_identifier=bundle_identifier)

    async def candidates(self, url: str) -> CandidateList:
        """Every handler that could open the document at ``url``, best first."""
        return candidates_from(await self._request(requests.candidates_url(url), "candidates"))

    async def candidates_for_descriptor(self, descriptor: int, name: str) -> CandidateList:
        """:meth:`candidates` for a file passed as an open descriptor."""
        return candidates_from(await self._pass(descriptor, requests.candidates_descriptor(name), "candidates"))

    async def candidates_for_file(self, path: str | os.PathLike[str]) -> CandidateList:
        """:meth:`candidates` for the file at ``path``, passed as a descriptor whenever offered."""
        absolute = requests.absolute(path)
        if await self.offers(Feature.OPEN_DESCRIPTOR):
            descriptor = open_for_reading(absolute)
            try:
                return await self.candidates_for_descriptor(descriptor, absolute)
            finally:
                os.close(descriptor)
        return await self.candidates(file_url(absolute))

    async def status(self) -> StatusReport:
        """The daemon's status (root, or a member of its administrators' group)."""
        return status_from(await self._request(requests.status(), "status"))

    # Events

    async def next_event(self, timeout: float | None = None) -> Event | None:
        """The next event, waiting at most ``timeout`` seconds; ``None`` when the time is up.

        Raises `connection-closed` once the connection has ended and every event before it was taken.
        """
        try:
            item = await asyncio.wait_for(self._events.get(), timeout)
        except asyncio.TimeoutError:
            return None
        if isinstance(item, _End):
            self._events.put_nowait(item)  # every later call sees the end too
            assert self._ended is not None
            raise self._ended
        return item

    async def events(self) -> AsyncIterator[Event]:
        """Every event in order; ends when this side closes, raises `connection-closed` when the daemon goes."""
        while True:
            try:
                event = await self.next_event()
            except DocRouteError as error:
                if self._closed_by_us and error.code == ErrorCode.CONNECTION_CLOSED:
                    return
                raise
            if event is not None:
                yield event

    # The wire

    async def _request(self, message: JSONObject, reply_type: str) -> JSONObject:
        self._last_id += 1
        request_id = str(self._last_id)
        # Registered before the line goes out: the reply may come before `send` returns.
        reply: asyncio.Future[JSONObject] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = reply
        try:
            await self._send({**message, "id": request_id})
            try:
                answer = await asyncio.wait_for(reply, self.timeout)
            except asyncio.TimeoutError:
                raise DocRouteError(
                    ErrorCode.CONNECTION_CLOSED,
                    f"docrouted did not answer '{message['type']}' within {self.timeout} s",
                    request_id=request_id,
                ) from None
        finally:
            self._pending.pop(request_id, None)
        return expect(answer, reply_type, message["type"])

    async def _send(self, message: JSONObject) -> None:
        line = encode_line(message)
        if self._ended is not None:
            raise self._ended
        try:
            # One writer at a time, so a slow drain never lets two lines interleave.
            async with self._write_lock:
                self._writer.write(line)
                await self._writer.drain()
        except (OSError, RuntimeError) as error:
            raise self._ended or DocRouteError(
                ErrorCode.CONNECTION_CLOSED, f"cannot send '{message['type']}' to docrouted: {error}"
            ) from error

    async def _read(self) -> None:
        framer = LineFramer()
        reason = "docrouted closed the connection"
        try:
            while True:
                chunk = await self._reader.read(65536)
                if not chunk:
                    break
                dropped = framer.dropped_lines
                for line in framer.feed(chunk):
                    try:
                        self._route(decode_line(line))
                    except DocRouteError as error:
                        self._log.warning("ignoring a line from docrouted: %s", error.message)
                if framer.dropped_lines != dropped:
                    self._log.warning("ignored a line from docrouted over the protocol's 1 MiB limit")
        except OSError as error:
            reason = f"docrouted's connection failed: {error}"
        finally:
            self._finish(reason)

    def _route(self, message: JSONObject) -> None:
        kind = message["type"]
        request_id = message.get("id")
        if kind in ("launch", "openURL"):
            try:
                self._events.put_nowait(event_from(message))
            except DocRouteError as error:
                self._log.warning("ignoring an event from docrouted that this client cannot read: %s", error.message)
        elif isinstance(request_id, str) and request_id in self._pending:
            waiting = self._pending.pop(request_id)
            if not waiting.done():
                waiting.set_result(message)
        elif kind == "error":
            unsolicited = error_from(message)
            self._unsolicited_error = unsolicited
            self._events.put_nowait(DaemonErrorEvent(unsolicited))
        else:
            self._log.debug("ignoring a '%s' that answers no pending request", kind)

    def _finish(self, reason: str) -> None:
        if self._closed_by_us:
            ended = DocRouteError(ErrorCode.CONNECTION_CLOSED, "the connection was closed by the client")
        elif self._unsolicited_error is not None and self._unsolicited_error.code == ErrorCode.TOO_MANY_CONNECTIONS:
            ended = self._unsolicited_error
        else:
            ended = DocRouteError(ErrorCode.CONNECTION_CLOSED, reason)
            self._log.info("connection to docrouted ended: %s", reason)
        self._ended = ended
        for waiting in self._pending.values():
            if not waiting.done():
                waiting.set_exception(ended)
        self._pending.clear()
        self._events.put_nowait(_End())

    async def _pass(self, descriptor: int, message: JSONObject, reply_type: str) -> JSONObject:
        welcome = await self.welcome()
        path = welcome.descriptor_socket_path
        if not welcome.offers(Feature.OPEN_DESCRIPTOR) or path is None:
            raise DocRouteError(
                ErrorCode.UNEXPECTED_REPLY,
                f"{welcome.daemon} does not offer open-descriptor; open the file by its URL instead",
            )
        # sendmsg with SCM_RIGHTS has no asyncio form: a short blocking exchange on a worker thread.
        reply = await asyncio.to_thread(exchange, path, {**message, "id": "1"}, descriptor, self.timeout)
        return expect(reply, reply_type, message["type"])
