"""What the daemon sends, as typed objects: events for a handler and replies to requests."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from .errors import DocRouteError, ErrorCode
from .fileurl import path_bytes_from_file_url
from .wire import JSONObject, LaunchOptionsKey


@dataclass(frozen=True)
class Welcome:
    """The daemon's `welcome`: who it is and the optional requests it serves."""

    protocol_version: int
    daemon: str
    """The daemon's name and version, such as ``docrouted/0.2.0``."""
    features: frozenset[str]
    """Names of :class:`~docroute.Feature`, and any a newer daemon adds."""
    descriptor_socket_path: str | None = None
    """Where to pass descriptors, resolved next to the main socket; ``None`` when not offered."""

    def offers(self, feature: str) -> bool:
        """Whether the daemon serves this feature."""
        return feature in self.features


@dataclass(frozen=True)
class Document:
    """One document (or custom-scheme URL) owed to a handler, as `launch` or `openURL` carries it.

    Hashable (by everything but :attr:`annotation`), so a handler can keep the ones it has seen."""

    delivery_id: str
    """Identifies the delivery; it never changes, so a handler can drop one it has seen."""
    url: str
    """``file://`` plus the percent-encoded path of the copy in the sandbox, or the custom-scheme URL as opened."""
    is_file_url: bool
    """Whether :attr:`url` names a file (the seed's ``[url isFileURL]``)."""
    content_type: str | None = None
    """The file's Uniform Type Identifier; ``None`` for a custom-scheme URL."""
    mailbox: str | None = None
    """The mailbox the file arrived in; ``None`` for a custom-scheme URL."""
    source_application: str | None = None
    """The bundle identifier of the application the document came from, when known."""
    annotation: JSONObject = field(default_factory=dict, hash=False)
    """For an inbox file at least ``mailbox``, ``originalFilename`` and ``size``; mail adds ``from``, ``subject``…"""

    @property
    def path_bytes(self) -> bytes | None:
        """The raw bytes of the copy's path in the sandbox; ``None`` for a custom-scheme URL."""
        if not self.is_file_url:
            return None
        return path_bytes_from_file_url(self.url)

    @property
    def path(self) -> str | None:
        """The copy's path, ready for :func:`open`; ``None`` for a custom-scheme URL."""
        raw = self.path_bytes
        return None if raw is None else os.fsdecode(raw)


@dataclass(frozen=True)
class OpenURL(Document):
    """`application:openURL:sourceApplication:annotation:`: every document after the launch."""


@dataclass(frozen=True)
class Launch:
    """`application:didFinishLaunchingWithOptions:`: sent once per subscription, first.

    It carries the oldest document that was waiting, or nothing (a plain launch: nothing to
    open, nothing to acknowledge). The document's fields are also here directly, ``None``
    (``False`` for :attr:`is_file_url`, ``{}`` for :attr:`annotation`) for a plain launch.
    """

    launch_options: JSONObject = field(hash=False)
    """As sent: ``UIApplicationLaunchOptionsURLKey`` and the rest (see :class:`~docroute.LaunchOptionsKey`); ``{}`` for a plain launch."""
    document: Document | None = None

    @property
    def is_plain(self) -> bool:
        """Whether nothing was waiting (no document, nothing to acknowledge)."""
        return self.document is None

    @property
    def delivery_id(self) -> str | None:
        """The delivery to acknowledge; ``None`` for a plain launch."""
        return None if self.document is None else self.document.delivery_id

    @property
    def url(self) -> str | None:
        """``UIApplicationLaunchOptionsURLKey``; ``None`` for a plain launch."""
        return None if self.document is None else self.document.url

    @property
    def is_file_url(self) -> bool:
        """Whether the document is a file (``False`` for a plain launch)."""
        return self.document is not None and self.document.is_file_url

    @property
    def content_type(self) -> str | None:
        """The file's Uniform Type Identifier, when a file came."""
        return None if self.document is None else self.document.content_type

    @property
    def mailbox(self) -> str | None:
        """The mailbox the file arrived in, when a file came."""
        return None if self.document is None else self.document.mailbox

    @property
    def source_application(self) -> str | None:
        """``UIApplicationLaunchOptionsSourceApplicationKey``, when known."""
        return None if self.document is None else self.document.source_application

    @property
    def annotation(self) -> JSONObject:
        """``UIApplicationLaunchOptionsAnnotationKey``; ``{}`` for a plain launch."""
        return {} if self.document is None else self.document.annotation

    @property
    def path(self) -> str | None:
        """The copy's path in the sandbox, when a file came."""
        return None if self.document is None else self.document.path


@dataclass(frozen=True)
class DaemonErrorEvent:
    """An `error` that answers no pending request, such as a failed `ack` (``not-found``,
    ``request_id`` ``ack:<deliveryID>``)."""

    error: DocRouteError


Event: TypeAlias = Launch | OpenURL | DaemonErrorEvent
"""What a subscribed connection receives, in the order the daemon sent it."""


@dataclass(frozen=True)
class OpenedDocument:
    """The `opened` reply: where an `open` was routed."""

    delivery_id: str
    bundle_identifier: str
    content_type: str | None = None
    """The file's type; ``None`` for a custom-scheme URL."""


@dataclass(frozen=True)
class Candidate:
    """A handler that could open a document, as Open In… lists it."""

    bundle_identifier: str
    name: str
    matched_type: str
    """The type (or URL scheme) by which it claims the document."""
    rank: str
    """``Owner``, ``Default`` or ``Alternate`` (CFBundleDocumentTypes' LSHandlerRank)."""
    role: str
    is_default: bool
    """Whether a plain `open` picks this one."""


@dataclass(frozen=True)
class CandidateList:
    """The `candidates` reply: every handler that could open a document, best first."""

    content_type: str | None
    """The document's type; ``None`` for a custom-scheme URL."""
    candidates: list[Candidate] = field(hash=False)

    @property
    def default(self) -> Candidate | None:
        """The one a plain `open` picks."""
        return next((candidate for candidate in self.candidates if candidate.is_default), None)


@dataclass(frozen=True)
class HandlerStatus:
    """One handler in `status`."""

    bundle_identifier: str
    subscribed: bool
    pending: int
    """Documents waiting for it."""
    extra: JSONObject = field(default_factory=dict, hash=False)
    """Optional fields for operators (``inFlight``, ``deliveredToday``, ``lastError``…)."""

    @property
    def hosts(self) -> list[str] | None:
        """In a fleet, the hosts where the handler has live instances (sorted; empty when it is
        subscribed nowhere); ``None`` when the daemon is not in a fleet or could not read the
        fleet's database."""
        names = self.extra.get("hosts")
        if not isinstance(names, list):
            return None
        return [name for name in names if isinstance(name, str)]

    @property
    def instances(self) -> int:
        """Competing connections of the handler on this daemon (``instances``, sent when more
        than one); 1 when absent and subscribed, else 0."""
        count = self.extra.get("instances")
        if isinstance(count, int) and not isinstance(count, bool):
            return count
        return 1 if self.subscribed else 0


@dataclass(frozen=True)
class InboxStatus:
    """One inbox folder in `status`."""

    path: str
    mailboxes: list[str] = field(hash=False)
    extra: JSONObject = field(default_factory=dict, hash=False)
    """Optional fields for operators (``kind``, ``waiting``, ``quarantined``…)."""


@dataclass(frozen=True)
class StatusReport:
    """The `status` reply. ``raw`` is the whole reply as sent, for the optional operator fields."""

    handlers: list[HandlerStatus] = field(hash=False)
    inboxes: list[InboxStatus] = field(hash=False)
    raw: JSONObject = field(hash=False)

    def handler(self, bundle_identifier: str) -> HandlerStatus | None:
        """The entry of one handler, if it is registered."""
        return next((entry for entry in self.handlers if entry.bundle_identifier == bundle_identifier), None)


# Reading messages. A reply that lacks a field the contract promises is `unreadable-message`.


def _unreadable(message: JSONObject, what: str) -> DocRouteError:
    return DocRouteError(
        ErrorCode.UNREADABLE_MESSAGE,
        f"docrouted's '{message.get('type')}' message {what}; this client and the daemon disagree on PROTOCOL.md",
        request_id=_request_id(message),
    )


def _request_id(message: JSONObject) -> str | None:
    value = message.get("id")
    return value if isinstance(value, str) else None


def _string(message: JSONObject, key: str, source: JSONObject | None = None) -> str:
    value = (message if source is None else source).get(key)
    if not isinstance(value, str):
        raise _unreadable(message, f"has no string '{key}'")
    return value


def _optional_string(message: JSONObject, key: str, source: JSONObject | None = None) -> str | None:
    value = (message if source is None else source).get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _unreadable(message, f"has a '{key}' that is not a string")
    return value


def _bool(message: JSONObject, key: str, source: JSONObject | None = None, default: bool | None = None) -> bool:
    value = (message if source is None else source).get(key, default)
    if not isinstance(value, bool):
        raise _unreadable(message, f"has no boolean '{key}'")
    return value


def _integer(message: JSONObject, key: str, source: JSONObject | None = None) -> int:
    value = (message if source is None else source).get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise _unreadable(message, f"has no integer '{key}'")
    return value


def _object(message: JSONObject, key: str, source: JSONObject | None = None, required: bool = True) -> JSONObject:
    value = (message if source is None else source).get(key)
    if value is None and not required:
        return {}
    if not isinstance(value, dict):
        raise _unreadable(message, f"has no object '{key}'")
    return value


def _list(message: JSONObject, key: str) -> list[Any]:
    value = message.get(key)
    if not isinstance(value, list):
        raise _unreadable(message, f"has no array '{key}'")
    return value


def error_from(message: JSONObject) -> DocRouteError:
    """The exception for a daemon `error` message; a code this library does not know is kept as sent."""
    code = message.get("code")
    text = message.get("message")
    return DocRouteError(
        code if isinstance(code, str) else ErrorCode.INTERNAL,
        text if isinstance(text, str) else "docrouted reported an error without a message",
        request_id=_request_id(message),
        from_daemon=True,
    )


def event_from(message: JSONObject) -> Launch | OpenURL:
    """A `launch` or `openURL` message as its event."""
    if message["type"] == "openURL":
        return OpenURL(
            delivery_id=_string(message, "deliveryID"),
            url=_string(message, "url"),
            is_file_url=_bool(message, "isFileURL"),
            content_type=_optional_string(message, "contentType"),
            mailbox=_optional_string(message, "mailbox"),
            source_application=_optional_string(message, "sourceApplication"),
            annotation=_object(message, "annotation", required=False),
        )
    options = _object(message, "launchOptions")
    url = _optional_string(message, LaunchOptionsKey.URL, options)
    if url is None:
        return Launch(launch_options=options)
    return Launch(
        launch_options=options,
        document=Document(
            delivery_id=_string(message, "deliveryID"),
            url=url,
            is_file_url=_bool(message, "isFileURL"),
            content_type=_optional_string(message, "contentType"),
            mailbox=_optional_string(message, "mailbox"),
            source_application=_optional_string(message, LaunchOptionsKey.SOURCE_APPLICATION, options),
            annotation=_object(message, LaunchOptionsKey.ANNOTATION, options, required=False),
        ),
    )


def welcome_from(message: JSONObject, socket_path: str) -> Welcome:
    """A `welcome` reply; its `descriptorSocket` resolved against the folder of ``socket_path``."""
    features = message.get("features") or []
    if not isinstance(features, list):
        raise _unreadable(message, "has 'features' that are not an array")
    descriptor_socket = _optional_string(message, "descriptorSocket")
    resolved = None
    if descriptor_socket is not None:
        resolved = os.path.join(os.path.dirname(socket_path), descriptor_socket)
    return Welcome(
        protocol_version=_integer(message, "protocol"),
        daemon=_string(message, "daemon"),
        features=frozenset(name for name in features if isinstance(name, str)),
        descriptor_socket_path=resolved,
    )


def opened_from(message: JSONObject) -> OpenedDocument:
    return OpenedDocument(
        delivery_id=_string(message, "deliveryID"),
        bundle_identifier=_string(message, "bundleIdentifier"),
        content_type=_optional_string(message, "contentType"),
    )


def candidates_from(message: JSONObject) -> CandidateList:
    entries: list[Candidate] = []
    for entry in _list(message, "candidates"):
        if not isinstance(entry, dict):
            raise _unreadable(message, "has a candidate that is not an object")
        bundle_identifier = _string(message, "bundleIdentifier", entry)
        entries.append(
            Candidate(
                bundle_identifier=bundle_identifier,
                # `name` is for display; a daemon that leaves it out still gives a usable list.
                name=_optional_string(message, "name", entry) or bundle_identifier,
                matched_type=_string(message, "matchedType", entry),
                rank=_string(message, "rank", entry),
                role=_string(message, "role", entry),
                is_default=_bool(message, "default", entry, default=False),
            )
        )
    return CandidateList(content_type=_optional_string(message, "contentType"), candidates=entries)


def status_from(message: JSONObject) -> StatusReport:
    handlers: list[HandlerStatus] = []
    for entry in _list(message, "handlers"):
        if not isinstance(entry, dict):
            raise _unreadable(message, "has a handler that is not an object")
        handlers.append(
            HandlerStatus(
                bundle_identifier=_string(message, "bundleIdentifier", entry),
                subscribed=_bool(message, "subscribed", entry),
                pending=_integer(message, "pending", entry),
                extra={key: value for key, value in entry.items() if key not in ("bundleIdentifier", "subscribed", "pending")},
            )
        )
    inboxes: list[InboxStatus] = []
    for entry in _list(message, "inboxes"):
        if not isinstance(entry, dict):
            raise _unreadable(message, "has an inbox that is not an object")
        mailboxes = entry.get("mailboxes")
        if not isinstance(mailboxes, list) or not all(isinstance(name, str) for name in mailboxes):
            raise _unreadable(message, "has an inbox whose 'mailboxes' are not an array of strings")
        inboxes.append(
            InboxStatus(
                path=_string(message, "path", entry),
                mailboxes=list(mailboxes),
                extra={key: value for key, value in entry.items() if key not in ("path", "mailboxes")},
            )
        )
    raw = {key: value for key, value in message.items() if key not in ("type", "id")}
    return StatusReport(handlers=handlers, inboxes=inboxes, raw=raw)


def expect(message: JSONObject, reply_type: str, request: str) -> JSONObject:
    """The reply itself, or the daemon's error raised, or `unexpected-reply`."""
    kind = message.get("type")
    if kind == "error":
        raise error_from(message)
    if kind != reply_type:
        raise DocRouteError(
            ErrorCode.UNEXPECTED_REPLY,
            f"docrouted answered '{request}' with '{kind}'",
            request_id=_request_id(message),
        )
    return message
