#!/usr/bin/env python3
"""A docroute handler in Python with nothing but the standard library, written from PROTOCOL.md.

It subscribes as a handler, prints each event as one line ("launch <url>" or "openURL <url>"),
acknowledges it as handled, and exits after --count events (0: run forever).

    python3 examples/python/handler.py --bundle com.sunsetlakesoftware.molecules

It is also a small Open In... client: --list PATH|URL prints the daemon's `candidates` reply
(every handler that could open it, best first), --open PATH|URL [--with BUNDLE_ID] sends it
(to that handler). A file goes as an open descriptor passed with SCM_RIGHTS on the daemon's
descriptor socket whenever `welcome` offers `open-descriptor`, so the daemon needs no right of
its own to read it; otherwise as its file:// URL.

    python3 examples/python/handler.py --list ./1abc.pdb
    python3 examples/python/handler.py --open ./1abc.pdb --with org.docroute.textviewer
"""
import argparse
import json
import os
import socket
import sys
import urllib.parse


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--socket", default=os.environ.get("DOCROUTE_SOCKET", "/run/docroute/docroute.sock"))
    parser.add_argument("--bundle", default=os.environ.get("DOCROUTE_BUNDLE_IDENTIFIER"))
    parser.add_argument("--count", type=int, default=0)
    parser.add_argument("--list", metavar="PATH_OR_URL", help="print every handler that could open it (Open In...)")
    parser.add_argument("--open", metavar="PATH_OR_URL", help="send it to its handler (or the one --with names)")
    parser.add_argument("--with", dest="with_bundle", metavar="BUNDLE_ID", help="with --open: the handler to send it to")
    args = parser.parse_args()
    if args.list or args.open:
        return open_in(args)
    if not args.bundle:
        parser.error("--bundle (or DOCROUTE_BUNDLE_IDENTIFIER) is needed to subscribe")

    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.connect(args.socket)
    stream = connection.makefile("rwb")

    def send(message):
        stream.write(json.dumps(message).encode() + b"\n")
        stream.flush()

    send({"type": "hello", "protocol": 1})
    send({"type": "subscribe", "id": "1", "bundleIdentifier": args.bundle})
    seen = 0
    for line in stream:
        message = json.loads(line)
        kind = message.get("type")
        if kind == "error":
            print(f"error {message.get('code')}: {message.get('message')}", file=sys.stderr)
            return 1
        if kind == "launch":
            url = message.get("launchOptions", {}).get("UIApplicationLaunchOptionsURLKey")
            if url is None:
                continue  # a plain launch: nothing to open, nothing to acknowledge
        elif kind == "openURL":
            url = message["url"]
        else:
            continue
        print(f"{kind} {url} {message.get('contentType', '')}", flush=True)
        send({"type": "ack", "deliveryID": message["deliveryID"], "handled": True})
        seen += 1
        if args.count and seen >= args.count:
            return 0
    return 0


def request(path, message, descriptor=None):
    """One request, one reply line. A descriptor travels with the line's first byte, in one sendmsg."""
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.connect(path)
    data = json.dumps(message).encode() + b"\n"
    if descriptor is None:
        connection.sendall(data)
    else:
        socket.send_fds(connection, [data], [descriptor])
    stream = connection.makefile("rb")
    line = stream.readline()
    connection.close()
    return json.loads(line)


def open_in(args) -> int:
    target = args.list or args.open
    welcome = request(args.socket, {"type": "hello", "id": "1", "protocol": 1})
    features = welcome.get("features", [])
    scheme = target.split(":", 1)[0] if ":" in target and not os.path.exists(target) else None
    if args.list:
        message = {"type": "candidates", "id": "2"}
    else:
        message = {"type": "open", "id": "2"}
        if args.with_bundle:
            message["bundleIdentifier"] = args.with_bundle
    if scheme is not None and scheme != "file":
        message["url"] = target
        reply = request(args.socket, message)
    else:
        path = urllib.parse.unquote(urllib.parse.urlparse(target).path) if scheme == "file" else os.path.abspath(target)
        if "open-descriptor" in features and "descriptorSocket" in welcome:
            # Relative to the folder of the socket we spoke to.
            descriptor_socket = os.path.join(os.path.dirname(args.socket), welcome["descriptorSocket"])
            descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            try:
                message.update({"descriptor": True, "name": os.path.basename(path)})
                reply = request(descriptor_socket, message, descriptor)
            finally:
                os.close(descriptor)
        else:
            message["url"] = "file://" + urllib.parse.quote(path)
            reply = request(args.socket, message)
    print(json.dumps(reply), flush=True)
    return 1 if reply.get("type") == "error" else 0


if __name__ == "__main__":
    sys.exit(main())
