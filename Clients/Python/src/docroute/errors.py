"""The one error type of the client: the daemon's `error` replies and the client's own failures."""

from __future__ import annotations

from typing import Final


class ErrorCode:
    """Stable codes of :class:`DocRouteError`, for programs to compare ``error.code`` with.

    The first group is PROTOCOL.md's error table, sent by the daemon; a newer daemon may send a
    code not listed here, which arrives unchanged (``error.code`` is the text on the wire). The
    second group names failures found on this side of the socket.
    """

    # Sent by the daemon (PROTOCOL.md, Errors).
    BAD_REQUEST: Final = "bad-request"
    UNSUPPORTED_PROTOCOL: Final = "unsupported-protocol"
    UNKNOWN_HANDLER: Final = "unknown-handler"
    NOT_PERMITTED: Final = "not-permitted"
    ALREADY_SUBSCRIBED: Final = "already-subscribed"
    NO_HANDLER: Final = "no-handler"
    NOT_FOUND: Final = "not-found"
    TOO_MANY_CONNECTIONS: Final = "too-many-connections"
    INTERNAL: Final = "internal"

    # Found by the client.
    CONNECT_FAILED: Final = "connect-failed"
    """The socket could not be connected: the daemon is not running, the path is wrong, or no permission."""
    CONNECTION_CLOSED: Final = "connection-closed"
    """The connection ended, or was closed, before the operation finished."""
    UNEXPECTED_REPLY: Final = "unexpected-reply"
    """The daemon answered with a reply of the wrong type, or lacks a feature the call needs."""
    UNREADABLE_MESSAGE: Final = "unreadable-message"
    """The daemon sent a reply this library could not read."""
    FILE_NOT_OPENED: Final = "file-not-opened"
    """A file to pass to the daemon could not be opened here (missing, or not readable by you)."""
    REQUEST_TOO_LONG: Final = "request-too-long"
    """A request would be a line over PROTOCOL.md's 1 MiB limit, so it was not sent."""

    DAEMON_CODES: Final = frozenset(
        {
            BAD_REQUEST,
            UNSUPPORTED_PROTOCOL,
            UNKNOWN_HANDLER,
            NOT_PERMITTED,
            ALREADY_SUBSCRIBED,
            NO_HANDLER,
            NOT_FOUND,
            TOO_MANY_CONNECTIONS,
            INTERNAL,
        }
    )
    """The codes of PROTOCOL.md's error table."""


class DocRouteError(Exception):
    """A failed client operation: the daemon answered with an `error`, or the connection broke.

    ``code`` is stable (see :class:`ErrorCode`); ``message`` says what happened and what to do.
    ``request_id`` is the `id` of the request the daemon's error answers (``ack:<deliveryID>``
    for a failed acknowledgement); ``from_daemon`` tells the daemon's errors from the client's.
    """

    code: str
    message: str
    request_id: str | None
    from_daemon: bool

    def __init__(self, code: str, message: str, *, request_id: str | None = None, from_daemon: bool = False) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.request_id = request_id
        self.from_daemon = from_daemon

    def __repr__(self) -> str:
        return f"DocRouteError(code={self.code!r}, message={self.message!r}, request_id={self.request_id!r})"


FINAL_HANDLER_CODES: Final = frozenset(
    {ErrorCode.UNKNOWN_HANDLER, ErrorCode.NOT_PERMITTED, ErrorCode.UNSUPPORTED_PROTOCOL, ErrorCode.BAD_REQUEST}
)
"""Daemon codes that refuse a handler for good: connecting again would get the same answer."""
