"""The requests a client sends (PROTOCOL.md, Client to daemon), shared by both APIs.

Each builder leaves out `id`: the connection adds its own.
"""

from __future__ import annotations

import os

from .wire import PROTOCOL_VERSION, JSONObject


def hello(protocol_version: int = PROTOCOL_VERSION) -> JSONObject:
    return {"type": "hello", "protocol": protocol_version}


def subscribe(bundle_identifier: str, compete: bool = False) -> JSONObject:
    message: JSONObject = {"type": "subscribe", "bundleIdentifier": bundle_identifier}
    if compete:
        message["compete"] = True
    return message


def ack(delivery_id: str, handled: bool) -> JSONObject:
    # The id names the delivery, so a `not-found` answering it says which ack failed.
    return {"type": "ack", "id": f"ack:{delivery_id}", "deliveryID": delivery_id, "handled": handled}


def open_url(url: str, mailbox: str | None, bundle_identifier: str | None) -> JSONObject:
    return _with_options({"type": "open", "url": url}, mailbox, bundle_identifier)


def open_descriptor(name: str, mailbox: str | None, bundle_identifier: str | None) -> JSONObject:
    return _with_options({"type": "open", "descriptor": True, "name": _file_name(name)}, mailbox, bundle_identifier)


def candidates_url(url: str) -> JSONObject:
    return {"type": "candidates", "url": url}


def candidates_descriptor(name: str) -> JSONObject:
    return {"type": "candidates", "descriptor": True, "name": _file_name(name)}


def status() -> JSONObject:
    return {"type": "status"}


def absolute(path: str | os.PathLike[str]) -> str:
    """A path from the current directory when relative; a symbolic link named is not resolved."""
    return os.path.abspath(os.fspath(path))


def _file_name(name: str) -> str:
    # The daemon refuses a name with '/'; passing the last component of a path is what a caller means.
    return os.path.basename(name) or name


def _with_options(message: JSONObject, mailbox: str | None, bundle_identifier: str | None) -> JSONObject:
    if mailbox is not None:
        message["mailbox"] = mailbox
    if bundle_identifier is not None:
        message["bundleIdentifier"] = bundle_identifier
    return message
