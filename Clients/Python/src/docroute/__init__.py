"""docroute: the client for docrouted, for document handlers written in Python.

Standard library only. :func:`connect` gives a blocking :class:`Connection`;
:func:`docroute.aio.connect` an asyncio :class:`AsyncConnection` with the same requests.
:class:`HandlerRunner` (or :class:`AsyncHandlerRunner`) keeps a handler subscribed, reconnecting
with backoff, and passes each document to a :class:`DocumentHandler`.

The wire protocol is docs/PROTOCOL.md in the docroute repository.
"""

from __future__ import annotations

from . import aio
from .aio import AsyncConnection
from .connection import Connection, connect
from .errors import DocRouteError, ErrorCode
from .fileurl import file_url, is_file_url, path_bytes_from_file_url, path_from_file_url
from .handler import AsyncDocumentHandler, AsyncHandlerRunner, DocumentHandler, HandlerRunner, ReconnectBackoff
from .messages import (
    Candidate,
    CandidateList,
    DaemonErrorEvent,
    Document,
    Event,
    HandlerStatus,
    InboxStatus,
    Launch,
    OpenedDocument,
    OpenURL,
    StatusReport,
    Welcome,
)
from .wire import (
    DEFAULT_SOCKET_PATH,
    MAXIMUM_LINE_LENGTH,
    PROTOCOL_VERSION,
    SOCKET_PATH_ENVIRONMENT_VARIABLE,
    Feature,
    LaunchOptionsKey,
    default_socket_path,
)

__version__ = "0.2.0"

__all__ = [
    "DEFAULT_SOCKET_PATH",
    "MAXIMUM_LINE_LENGTH",
    "PROTOCOL_VERSION",
    "SOCKET_PATH_ENVIRONMENT_VARIABLE",
    "AsyncConnection",
    "AsyncDocumentHandler",
    "AsyncHandlerRunner",
    "Candidate",
    "CandidateList",
    "Connection",
    "DaemonErrorEvent",
    "DocRouteError",
    "Document",
    "DocumentHandler",
    "ErrorCode",
    "Event",
    "Feature",
    "HandlerRunner",
    "HandlerStatus",
    "InboxStatus",
    "Launch",
    "LaunchOptionsKey",
    "OpenURL",
    "OpenedDocument",
    "ReconnectBackoff",
    "StatusReport",
    "Welcome",
    "aio",
    "connect",
    "default_socket_path",
    "file_url",
    "is_file_url",
    "path_bytes_from_file_url",
    "path_from_file_url",
]
