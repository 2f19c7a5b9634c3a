"""Passing an open file to the daemon (feature `open-descriptor`), blocking.

The descriptor travels with SCM_RIGHTS in the same ``sendmsg`` as the first bytes of the line,
on the daemon's descriptor socket (`welcome`'s `descriptorSocket`): the daemon's main socket
reads with ``read(2)``, which drops passed descriptors. One request, one reply, on a short
connection of its own.
"""

from __future__ import annotations

import array
import errno
import os
import socket

from .errors import DocRouteError, ErrorCode
from .wire import JSONObject, LineFramer, decode_line, encode_line


def open_for_reading(path: str) -> int:
    """Opens a file to pass it; raises `file-not-opened` saying why it could not be.

    ``O_NONBLOCK`` keeps a FIFO from blocking the open; the daemon refuses anything but a
    regular file anyway.
    """
    try:
        return os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError as error:
        if error.errno == errno.ENOENT:
            text = f"{path} does not exist"
        elif error.errno == errno.EACCES:
            text = f"you cannot read {path}, so docrouted will not read it for you"
        else:
            text = f"{path} cannot be opened: {error.strerror}"
        raise DocRouteError(ErrorCode.FILE_NOT_OPENED, text) from error


def exchange(socket_path: str, message: JSONObject, descriptor: int, timeout: float | None = None) -> JSONObject:
    """Sends ``message`` with ``descriptor`` attached and returns the reply (an `error` reply too).

    The descriptor stays the caller's: the kernel duplicates it into the daemon.
    """
    line = encode_line(message)
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    try:
        connection.settimeout(timeout)
        try:
            connection.connect(socket_path)
        except OSError as error:
            raise DocRouteError(
                ErrorCode.CONNECT_FAILED,
                f"cannot connect to docrouted's descriptor socket at {socket_path}: {error.strerror or error}",
            ) from error
        try:
            rights = array.array("i", [descriptor]).tobytes()
            sent = connection.sendmsg([line], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, rights)])
            # The descriptor went with the first bytes; the rest of a long line follows plainly.
            if sent < len(line):
                connection.sendall(line[sent:])
        except OSError as error:
            raise DocRouteError(ErrorCode.CONNECTION_CLOSED, f"cannot pass the file to docrouted: {error}") from error
        framer = LineFramer()
        while True:
            try:
                chunk = connection.recv(65536)
            except OSError as error:
                raise DocRouteError(ErrorCode.CONNECTION_CLOSED, f"the reply from docrouted could not be read: {error}") from error
            if not chunk:
                raise DocRouteError(ErrorCode.CONNECTION_CLOSED, "docrouted closed the descriptor socket without a reply")
            for reply in framer.feed(chunk):
                return decode_line(reply)
    finally:
        connection.close()
