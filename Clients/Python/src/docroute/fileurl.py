"""``file://`` URLs as docrouted writes and reads them (RFC 3986, RFC 8089).

Paths are bytes on Linux and need not be UTF-8; every byte except ``/`` and the unreserved
characters (``A-Z a-z 0-9 - . _ ~``) is percent-encoded with upper-case hex digits, so any name
gets a URL and comes back from it unchanged.
"""

from __future__ import annotations

import os

from .errors import DocRouteError, ErrorCode

_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/")
_HEX = "0123456789ABCDEF"
_HEX_DIGITS = frozenset(b"0123456789ABCDEFabcdef")


def file_url(path: str | bytes) -> str:
    """The ``file://`` URL of an absolute path (text, or raw bytes that need not be UTF-8)."""
    raw = os.fsencode(path)
    if not raw.startswith(b"/"):
        raise DocRouteError(ErrorCode.FILE_NOT_OPENED, f"{os.fsdecode(raw)!r} is not absolute; a file URL needs a path starting with '/'")
    if b"\0" in raw:
        raise DocRouteError(ErrorCode.FILE_NOT_OPENED, "a file path cannot contain a NUL byte")
    parts = ["file://"]
    for byte in raw:
        parts.append(chr(byte) if byte in _UNRESERVED else "%" + _HEX[byte >> 4] + _HEX[byte & 0x0F])
    return "".join(parts)


def is_file_url(url: str) -> bool:
    """Whether the URL's scheme is ``file`` (case-insensitive, as RFC 3986 says schemes are)."""
    return url[:5].lower() == "file:"


def path_bytes_from_file_url(url: str) -> bytes:
    """The absolute path, as bytes, that a ``file:`` URL names.

    Accepts ``file:///path``, ``file://localhost/path`` and ``file:/path``; refuses another
    scheme, a remote host, a query or fragment, a malformed ``%`` escape and an encoded NUL.
    """
    if not is_file_url(url):
        raise ValueError(f"{url!r} is not a file URL; expected 'file:///absolute/path'")
    rest = url[5:]
    if rest.startswith("//"):
        rest = rest[2:]
        slash = rest.find("/")
        host = rest if slash < 0 else rest[:slash]
        if host.lower() not in ("", "localhost"):
            raise ValueError(f"file URL {url!r} names host {host!r}; only local files can be named ('file:///path')")
        rest = rest[len(host):]
    if not rest.startswith("/"):
        raise ValueError(f"file URL {url!r} has no absolute path")
    if "?" in rest or "#" in rest:
        raise ValueError(f"file URL {url!r} has a query or fragment; '?' and '#' in file names are percent-encoded")
    encoded = rest.encode("utf-8")
    path = bytearray()
    index = 0
    while index < len(encoded):
        byte = encoded[index]
        if byte == ord("%"):
            digits = encoded[index + 1 : index + 3]
            if len(digits) != 2 or not all(digit in _HEX_DIGITS for digit in digits):
                raise ValueError(f"file URL {url!r} has a malformed percent escape; '%' must be followed by two hex digits")
            value = int(digits, 16)
            if value == 0:
                raise ValueError(f"file URL {url!r} encodes a NUL byte, which no file name can contain")
            path.append(value)
            index += 3
        else:
            path.append(byte)
            index += 1
    return bytes(path)


def path_from_file_url(url: str) -> str:
    """:func:`path_bytes_from_file_url` as a ``str`` path for :func:`open` and :mod:`os`.

    A name that is not UTF-8 keeps its bytes as surrogate escapes (:func:`os.fsdecode`), so the
    path still opens the file.
    """
    return os.fsdecode(path_bytes_from_file_url(url))
