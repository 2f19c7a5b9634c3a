"""The synchronous connection to docrouted."""

from __future__ import annotations

import collections
import logging
import os
import socket
import threading
import time
from collections.abc import Iterator
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


def connect(socket_path: str | None = None, *, timeout: float | None = None, log: logging.Logger | None = None) -> Connection:
    """Connects to docrouted (``$DOCROUTE_SOCKET``, else ``/run/docroute/docroute.sock``)."""
    return Connection.connect(socket_path, timeout=timeout, log=log)


def open_socket(path: str) -> socket.socket:
    """A connected Unix stream socket, or `connect-failed` saying what to check."""
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    try:
        connection.connect(path)
    except OSError as error:
        connection.close()
        raise DocRouteError(
            ErrorCode.CONNECT_FAILED,
            f"cannot connect to docrouted at {path}: {error.strerror or error}; check that docroute.socket is active, "
            "or set DOCROUTE_SOCKET to the daemon's socket",
        ) from error
    return connection


class Connection:
    """One connection to docrouted over its Unix socket, used from one thread.

    Requests (:meth:`hello`, :meth:`subscribe`, :meth:`open`, :meth:`candidates`,
    :meth:`status`) send a line and wait for the reply with their `id`; events that arrive
    meanwhile are kept, in order, for :meth:`events` and :meth:`next_event`. ``timeout`` bounds
    each request's wait for its reply (``None``: no bound). Use it as a context manager, or call
    :meth:`close`. Only :meth:`shutdown` may be called from another thread.

    >>> with docroute.connect() as connection:
    ...     connection.subscribe("com.sunsetlakesoftware.molecules")
    ...     for event in connection.events():
    ...         if isinstance(event, (docroute.Launch, docroute.OpenURL)) and event.delivery_id is not None:
    ...             connection.ack(event.delivery_id, handled=True)
    """

    def __init__(
        self, sock: socket.socket, socket_path: str, *, timeout: float | None = None, log: logging.Logger | None = None
    ) -> None:
        self.socket_path = socket_path
        """The socket this connection was made to."""
        self.timeout = timeout
        self._socket = sock
        self._log = log or logger
        self._framer = LineFramer()
        # The one request waiting for its reply (a connection is used from one thread).
        self._awaiting: str | None = None
        self._reply: JSONObject | None = None
        self._events: collections.deque[Event] = collections.deque()
        self._welcome: Welcome | None = None
        self._last_id = 0
        self._ended: DocRouteError | None = None
        self._closed_by_us = threading.Event()
        # An `error` answering no request, such as too-many-connections before the daemon hangs
        # up: the reason to give when the connection then ends.
        self._unsolicited_error: DocRouteError | None = None

    @classmethod
    def connect(
        cls, socket_path: str | None = None, *, timeout: float | None = None, log: logging.Logger | None = None
    ) -> Connection:
        """Connects to docrouted (``$DOCROUTE_SOCKET``, else ``/run/docroute/docroute.sock``)."""
        path = socket_path if socket_path is not None else default_socket_path()
        return cls(open_socket(path), path, timeout=timeout, log=log)

    # Lifecycle

    def __enter__(self) -> Connection:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Closes the connection; :meth:`events` then ends without error."""
        self._closed_by_us.set()
        if self._ended is None:
            self._ended = DocRouteError(ErrorCode.CONNECTION_CLOSED, "the connection was closed by the client")
        self._socket.close()

    def shutdown(self) -> None:
        """Ends the connection from any thread: a read blocked in another thread returns, and
        :meth:`events` there ends without error. Call :meth:`close` afterwards on the reading thread."""
        self._closed_by_us.set()
        try:
            self._socket.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # already closed or never fully connected: nothing left to wake

    @property
    def closed(self) -> bool:
        """Whether the connection has ended, on either side."""
        return self._ended is not None

    # Requests

    def hello(self, protocol_version: int = PROTOCOL_VERSION) -> Welcome:
        """Sends `hello` and returns the daemon's `welcome` (features, descriptor socket)."""
        reply = self._request(requests.hello(protocol_version), "welcome")
        self._welcome = welcome_from(reply, self.socket_path)
        return self._welcome

    def welcome(self) -> Welcome:
        """The `welcome` already received, else asked for now."""
        return self._welcome if self._welcome is not None else self.hello()

    def offers(self, feature: str) -> bool:
        """Whether the daemon serves a :class:`~docroute.Feature` (asks for `welcome` once if needed)."""
        return self.welcome().offers(feature)

    def subscribe(self, bundle_identifier: str, *, compete: bool = False) -> int:
        """Becomes that handler's live connection; returns how many documents are waiting.

        The `launch` event follows on :meth:`events`. With ``compete=True`` the connection is one
        of the handler's competing instances (feature ``compete``): each delivery goes to one of
        them, and what one leaves unacknowledged goes to the others. Every connection of the
        handler must ask for it alike; otherwise the reply is ``already-subscribed``.
        """
        reply = self._request(requests.subscribe(bundle_identifier, compete), "subscribed")
        pending = reply.get("pending")
        return pending if isinstance(pending, int) else 0

    def ack(self, delivery_id: str, handled: bool = True) -> None:
        """Acknowledges a delivery: ``handled=True`` took it, ``False`` declined it. Neither comes again.

        The daemon replies only on failure: a `not-found` arrives later on :meth:`events` as a
        :class:`~docroute.DaemonErrorEvent` whose ``request_id`` is ``ack:<delivery_id>``.
        """
        self._send(requests.ack(delivery_id, handled))

    def open(self, url: str, *, mailbox: str | None = None, bundle_identifier: str | None = None) -> OpenedDocument:
        """Routes a URL (custom scheme, or ``file://`` for a file the daemon may read) to its handler.

        With ``bundle_identifier`` it goes to that handler instead (Open In…, feature
        `open-with`); it must be one of :meth:`candidates`, else `no-handler`.
        """
        return opened_from(self._request(requests.open_url(url, mailbox, bundle_identifier), "opened"))

    def open_descriptor(
        self, descriptor: int, name: str, *, mailbox: str | None = None, bundle_identifier: str | None = None
    ) -> OpenedDocument:
        """Opens a file by passing its open descriptor (feature `open-descriptor`).

        docrouted reads only from the descriptor, so it needs no right of its own to the file.
        ``name`` is the document's file name. The descriptor stays the caller's to close.
        """
        return opened_from(self._pass(descriptor, requests.open_descriptor(name, mailbox, bundle_identifier), "opened"))

    def open_file(
        self, path: str | os.PathLike[str], *, mailbox: str | None = None, bundle_identifier: str | None = None
    ) -> OpenedDocument:
        """Opens the file at ``path`` as ``docroutectl open`` does: passed as a descriptor whenever
        the daemon offers `open-descriptor`, else by its ``file://`` URL."""
        absolute = requests.absolute(path)
        if self.offers(Feature.OPEN_DESCRIPTOR):
            descriptor = open_for_reading(absolute)
            try:
                return self.open_descriptor(descriptor, absolute, mailbox=mailbox, bundle_identifier=bundle_identifier)
            finally:
                os.close(descriptor)
        return self.open(file_url(absolute), mailbox=mailbox, bundle_identifier=bundle_identifier)

    def candidates(self, url: str) -> CandidateList:
        """Every handler that could open the document at ``url``, best first (feature `candidates`)."""
        return candidates_from(self._request(requests.candidates_url(url), "candidates"))

    def candidates_for_descriptor(self, descriptor: int, name: str) -> CandidateList:
        """:meth:`candidates` for a file passed as an open descriptor."""
        return candidates_from(self._pass(descriptor, requests.candidates_descriptor(name), "candidates"))

    def candidates_for_file(self, path: str | os.PathLike[str]) -> CandidateList:
        """:meth:`candidates` for the file at ``path``, passed as a descriptor whenever offered."""
        absolute = requests.absolute(path)
        if self.offers(Feature.OPEN_DESCRIPTOR):
            descriptor = open_for_reading(absolute)
            try:
                return self.candidates_for_descriptor(descriptor, absolute)
            finally:
                os.close(descriptor)
        return self.candidates(file_url(absolute))

    def status(self) -> StatusReport:
        """The daemon's status (root, or a member of its administrators' group)."""
        return status_from(self._request(requests.status(), "status"))

    # Events

    def next_event(self, timeout: float | None = None) -> Event | None:
        """The next event, waiting at most ``timeout`` seconds (``None``: as long as it takes).

        Returns ``None`` when the time is up; raises `connection-closed` when the connection ends.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._events:
            if not self._receive(deadline):
                return None
        return self._events.popleft()

    def events(self) -> Iterator[Event]:
        """Every event, in the order the daemon sent them.

        Ends when this side closes the connection (:meth:`close`, :meth:`shutdown`); raises
        `connection-closed` when the daemon goes away.
        """
        while True:
            try:
                event = self.next_event()
            except DocRouteError as error:
                if self._closed_by_us.is_set() and error.code == ErrorCode.CONNECTION_CLOSED:
                    return
                raise
            if event is not None:
                yield event

    # The wire

    def _request(self, message: JSONObject, reply_type: str) -> JSONObject:
        self._last_id += 1
        request_id = str(self._last_id)
        self._send({**message, "id": request_id})
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        self._awaiting = request_id
        try:
            while self._reply is None:
                if not self._receive(deadline):
                    raise DocRouteError(
                        ErrorCode.CONNECTION_CLOSED,
                        f"docrouted did not answer '{message['type']}' within {self.timeout} s",
                        request_id=request_id,
                    )
            return expect(self._reply, reply_type, message["type"])
        finally:
            self._awaiting = None
            self._reply = None

    def _route(self, message: JSONObject) -> None:
        kind = message["type"]
        if kind in ("launch", "openURL"):
            try:
                self._events.append(event_from(message))
            except DocRouteError as error:
                self._log.warning("ignoring an event from docrouted that this client cannot read: %s", error.message)
        elif self._awaiting is not None and message.get("id") == self._awaiting:
            self._reply = message
        elif kind == "error":
            unsolicited = error_from(message)
            self._unsolicited_error = unsolicited
            self._events.append(DaemonErrorEvent(unsolicited))
        else:
            self._log.debug("ignoring a '%s' that answers no pending request", kind)

    def _receive(self, deadline: float | None) -> bool:
        """Reads what arrived and routes it; False when the deadline passed first."""
        if self._ended is not None:
            raise self._ended
        while True:
            if deadline is None:
                self._socket.settimeout(None)
            else:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._socket.settimeout(remaining)
            try:
                chunk = self._socket.recv(65536)
            except TimeoutError:
                return False
            except InterruptedError:
                continue
            except OSError as error:
                raise self._end(f"docrouted's connection failed: {error}") from error
            break
        if not chunk:
            raise self._end("docrouted closed the connection")
        dropped = self._framer.dropped_lines
        for line in self._framer.feed(chunk):
            try:
                self._route(decode_line(line))
            except DocRouteError as error:
                self._log.warning("ignoring a line from docrouted: %s", error.message)
        if self._framer.dropped_lines != dropped:
            self._log.warning("ignored a line from docrouted over the protocol's 1 MiB limit")
        return True

    def _end(self, reason: str) -> DocRouteError:
        if self._closed_by_us.is_set():
            self._ended = DocRouteError(ErrorCode.CONNECTION_CLOSED, "the connection was closed by the client")
        elif self._unsolicited_error is not None and self._unsolicited_error.code == ErrorCode.TOO_MANY_CONNECTIONS:
            self._ended = self._unsolicited_error
        else:
            self._ended = DocRouteError(ErrorCode.CONNECTION_CLOSED, reason)
        return self._ended

    def _send(self, message: JSONObject) -> None:
        line = encode_line(message)
        if self._ended is not None:
            raise self._ended
        try:
            self._socket.sendall(line)
        except OSError as error:
            raise self._end(f"cannot send '{message['type']}' to docrouted: {error}") from error

    def _pass(self, descriptor: int, message: JSONObject, reply_type: str) -> JSONObject:
        welcome = self.welcome()
        path = welcome.descriptor_socket_path
        if not welcome.offers(Feature.OPEN_DESCRIPTOR) or path is None:
            raise DocRouteError(
                ErrorCode.UNEXPECTED_REPLY,
                f"{welcome.daemon} does not offer open-descriptor; open the file by its URL instead",
            )
        reply = exchange(path, {**message, "id": "1"}, descriptor, self.timeout)
        return expect(reply, reply_type, message["type"])
