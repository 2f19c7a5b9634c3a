"""PROTOCOL.md's framing: one JSON object per line, UTF-8, ended by ``\\n``, at most 1 MiB."""

from __future__ import annotations

import json
import logging
import os
from typing import Any, Final

from .errors import DocRouteError, ErrorCode

PROTOCOL_VERSION: Final = 1
"""The protocol version this library speaks (`hello`'s `protocol`)."""

MAXIMUM_LINE_LENGTH: Final = 1 << 20
"""The longest line either side accepts, in bytes, not counting the ``\\n``."""

DEFAULT_SOCKET_PATH: Final = "/run/docroute/docroute.sock"
"""Where docrouted listens when the configuration names no other socket."""

SOCKET_PATH_ENVIRONMENT_VARIABLE: Final = "DOCROUTE_SOCKET"
"""The environment variable naming the daemon's socket; docrouted sets it for handlers it launches."""

JSONObject = dict[str, Any]
"""A JSON object as :func:`json.loads` returns it."""


class Feature:
    """Names in `welcome`'s `features`: the optional requests a daemon serves."""

    CANDIDATES: Final = "candidates"
    """`candidates`: who could open a document (Open In…)."""
    OPEN_WITH: Final = "open-with"
    """`open` with `bundleIdentifier`: the user's pick from the candidates."""
    OPEN_DESCRIPTOR: Final = "open-descriptor"
    """`open` and `candidates` of a file passed as an open descriptor (SCM_RIGHTS)."""


class LaunchOptionsKey:
    """The keys of a `launch` event's `launchOptions`, as UIKit names them."""

    URL: Final = "UIApplicationLaunchOptionsURLKey"
    SOURCE_APPLICATION: Final = "UIApplicationLaunchOptionsSourceApplicationKey"
    ANNOTATION: Final = "UIApplicationLaunchOptionsAnnotationKey"


def default_socket_path(environment: dict[str, str] | None = None) -> str:
    """``$DOCROUTE_SOCKET`` when set and not empty, else ``/run/docroute/docroute.sock``."""
    env = os.environ if environment is None else environment
    path = env.get(SOCKET_PATH_ENVIRONMENT_VARIABLE, "")
    return path if path else DEFAULT_SOCKET_PATH


def encode_line(message: JSONObject) -> bytes:
    """One request as its line, ``\\n`` included; refuses one the daemon would refuse for its length."""
    # Compact separators and raw UTF-8: the line is what counts against the limit.
    data = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
    if len(data) > MAXIMUM_LINE_LENGTH:
        raise DocRouteError(
            ErrorCode.REQUEST_TOO_LONG,
            f"the '{message.get('type')}' request is {len(data)} bytes, over the protocol's line limit of "
            f"{MAXIMUM_LINE_LENGTH} bytes; send a shorter one (a large file goes by URL or descriptor, never inline)",
        )
    return data + b"\n"


def decode_line(line: bytes) -> JSONObject:
    """A line from the daemon as a JSON object with a string `type`."""
    try:
        value = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise DocRouteError(ErrorCode.UNREADABLE_MESSAGE, f"docrouted sent a line that is not JSON: {error}") from error
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        raise DocRouteError(ErrorCode.UNREADABLE_MESSAGE, "docrouted sent a line that is not a message (no string 'type')")
    return value


class LineFramer:
    """Splits a byte stream into lines without their ``\\n``.

    A line longer than :data:`MAXIMUM_LINE_LENGTH` is counted in ``dropped_lines`` and its bytes
    are discarded up to the next ``\\n``, so the connection stays usable and memory stays bounded.
    """

    def __init__(self, maximum_line_length: int = MAXIMUM_LINE_LENGTH) -> None:
        self.maximum_line_length = maximum_line_length
        self.dropped_lines = 0
        self._buffer = bytearray()
        self._discarding = False

    def feed(self, chunk: bytes) -> list[bytes]:
        """Adds received bytes; returns the lines they completed, in order."""
        lines: list[bytes] = []
        start = 0
        if self._discarding:
            newline = chunk.find(b"\n")
            if newline < 0:
                return lines
            self._discarding = False
            start = newline + 1
        scanned = len(self._buffer)
        self._buffer += chunk[start:]
        line_start = 0
        while True:
            newline = self._buffer.find(b"\n", max(scanned, line_start))
            if newline < 0:
                break
            if newline - line_start > self.maximum_line_length:
                self.dropped_lines += 1
            else:
                lines.append(bytes(self._buffer[line_start:newline]))
            line_start = newline + 1
        del self._buffer[:line_start]
        if len(self._buffer) > self.maximum_line_length:
            self.dropped_lines += 1
            self._buffer.clear()
            self._discarding = True
        return lines

    @property
    def buffered(self) -> int:
        """Bytes held of a line not yet complete."""
        return len(self._buffer)


logger = logging.getLogger("docroute")
"""The library's logger: it never prints; a program that wants its warnings configures :mod:`logging`."""
# Without it, logging's last-resort handler would print warnings of a program that set up no logging.
logger.addHandler(logging.NullHandler())
