#!/usr/bin/env python3
"""A docroute handler in Python with nothing but the standard library, written from PROTOCOL.md.

It subscribes as a handler, prints each event as one line ("launch <url>" or "openURL <url>"),
acknowledges it as handled, and exits after --count events (0: run forever).

    python3 examples/python/handler.py --bundle com.sunsetlakesoftware.molecules
"""
import argparse
import json
import os
import socket
import sys


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--socket", default=os.environ.get("DOCROUTE_SOCKET", "/run/docroute/docroute.sock"))
    parser.add_argument("--bundle", default=os.environ.get("DOCROUTE_BUNDLE_IDENTIFIER"), required="DOCROUTE_BUNDLE_IDENTIFIER" not in os.environ)
    parser.add_argument("--count", type=int, default=0)
    args = parser.parse_args()

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


if __name__ == "__main__":
    sys.exit(main())
