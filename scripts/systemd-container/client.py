#!/usr/bin/env python3
"""A docroute protocol client (PROTOCOL.md) and journal checker for systemd-container-test.sh.

  client.py hello SOCKET
      Sends hello; prints the welcome line. Exit 0 on welcome.
  client.py subscribe SOCKET BUNDLE --expect NAME [--expect NAME …] [--ack] [--timeout S] [--linger S]
      Subscribes as BUNDLE and prints every message, one JSON line each, until a launch/openURL
      for each expected file name has arrived (acknowledging each with --ack), then keeps reading
      for --linger seconds. Exit 0 when all expected names arrived, 1 otherwise.
  client.py journal BUNDLE DELIVERY_ID [LAUNCHED] < journalctl-json-lines
      Checks that journalctl -o json output holds docrouted's structured "delivered" entry for
      DELIVERY_ID and a "handler launched" entry for LAUNCHED (default BUNDLE; "-": none needed);
      prints them. Exit 0 when all are there.
"""
import json
import socket
import sys
import time

DELIVERED = "31669d38d12b455bb3404bef73eefbfa"
HANDLER_LAUNCHED = "be4388ca850546659d3b6865e29c6598"


class Lines:
    def __init__(self, path, timeout):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buffer = b""

    def send(self, message):
        self.sock.sendall(json.dumps(message, separators=(",", ":")).encode() + b"\n")

    def read(self, deadline):
        while b"\n" not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            self.sock.settimeout(remaining)
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                return None
            if not chunk:
                return None
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode()


def option_values(arguments, name):
    values = []
    for index, argument in enumerate(arguments):
        if argument == name and index + 1 < len(arguments):
            values.append(arguments[index + 1])
    return values


def hello(path):
    client = Lines(path, 30)
    client.send({"type": "hello", "protocol": 1})
    line = client.read(time.monotonic() + 30)
    print(line)
    return 0 if line and json.loads(line).get("type") == "welcome" else 1


def file_url_of(message):
    if message.get("type") == "launch":
        return message.get("launchOptions", {}).get("UIApplicationLaunchOptionsURLKey", "")
    if message.get("type") == "openURL":
        return message.get("url", "")
    return ""


def subscribe(path, bundle, arguments):
    expected = set(option_values(arguments, "--expect"))
    timeout = float((option_values(arguments, "--timeout") or ["30"])[0])
    linger = float((option_values(arguments, "--linger") or ["0"])[0])
    acknowledge = "--ack" in arguments
    client = Lines(path, timeout)
    client.send({"type": "subscribe", "id": "1", "bundleIdentifier": bundle})
    deadline = time.monotonic() + timeout
    lingering = False
    while True:
        line = client.read(deadline)
        if line is None:
            break
        print(line, flush=True)
        message = json.loads(line)
        if message.get("type") == "error":
            print(f"error from docrouted: {line}", file=sys.stderr)
            return 1
        url = file_url_of(message)
        name = url.rsplit("/", 1)[-1]
        if acknowledge and message.get("deliveryID"):
            client.send({"type": "ack", "deliveryID": message["deliveryID"], "handled": True})
        expected.discard(name)
        if not expected and not lingering:
            lingering = True
            deadline = time.monotonic() + linger
    if expected:
        print(f"not received within {timeout} s: {', '.join(sorted(expected))}", file=sys.stderr)
        return 1
    return 0


def journal(bundle, delivery_id, launched_bundle=None):
    if launched_bundle is None:
        launched_bundle = bundle
    delivered = None
    launched = None
    for raw in sys.stdin:
        raw = raw.strip()
        if not raw:
            continue
        entry = json.loads(raw)
        if entry.get("MESSAGE_ID") == DELIVERED and entry.get("DOCROUTE_DELIVERY_ID") == delivery_id:
            delivered = entry
        if entry.get("MESSAGE_ID") == HANDLER_LAUNCHED and entry.get("DOCROUTE_BUNDLE_ID") == launched_bundle:
            launched = entry
    keys = ("MESSAGE_ID", "MESSAGE", "DOCROUTE_BUNDLE_ID", "DOCROUTE_DELIVERY_ID", "DOCROUTE_MAILBOX",
            "DOCROUTE_PATH", "PRIORITY", "SYSLOG_IDENTIFIER", "_SYSTEMD_UNIT", "_UID")
    for label, entry in (("delivered", delivered), ("handler-launched", launched)):
        if entry is None and label == "handler-launched" and launched_bundle == "-":
            continue
        if entry is None:
            print(f"journal: no '{label}' entry", file=sys.stderr)
        else:
            print(f"journal {label}: " + json.dumps({key: entry.get(key) for key in keys if key in entry}))
    if delivered is not None and delivered.get("DOCROUTE_BUNDLE_ID") != bundle:
        print(f"journal: delivered entry names {delivered.get('DOCROUTE_BUNDLE_ID')}, not {bundle}", file=sys.stderr)
        return 1
    return 0 if delivered is not None and (launched is not None or launched_bundle == "-") else 1


def main(arguments):
    if len(arguments) >= 2 and arguments[0] == "hello":
        return hello(arguments[1])
    if len(arguments) >= 3 and arguments[0] == "subscribe":
        return subscribe(arguments[1], arguments[2], arguments[3:])
    if len(arguments) in (3, 4) and arguments[0] == "journal":
        return journal(*arguments[1:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
