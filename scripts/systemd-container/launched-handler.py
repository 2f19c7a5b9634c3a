#!/usr/bin/env python3
"""A handler that systemd starts (docroute-handler@docroute-launched.service) for
systemd-container-test.sh. It subscribes as $DOCROUTE_BUNDLE_IDENTIFIER on $DOCROUTE_SOCKET, takes
its launch event, and writes what the test checks to Documents/report.json in its own container:
the launch message, the document's bytes as it reads them, the identity lines of its own
/proc/self/status, and what happens when it tries to reach another handler's container. Then it
acknowledges and stays subscribed (the test reads /proc/<its pid>/status from outside), until
systemd stops it.
"""
import json
import os
import socket
import sys
import urllib.parse

bundle = os.environ["DOCROUTE_BUNDLE_IDENTIFIER"]
other = sys.argv[1] if len(sys.argv) > 1 else ""

sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.connect(os.environ["DOCROUTE_SOCKET"])
sock.sendall(json.dumps({"type": "subscribe", "id": "1", "bundleIdentifier": bundle}).encode() + b"\n")
stream = sock.makefile("rb")
messages = []
launch = None
while launch is None:
    line = stream.readline()
    if not line:
        sys.exit("docrouted closed the connection before the launch event")
    message = json.loads(line)
    messages.append(message)
    if message.get("type") == "error":
        sys.exit(f"docrouted refused: {line!r}")
    if message.get("type") == "launch":
        launch = message

url = launch.get("launchOptions", {}).get("UIApplicationLaunchOptionsURLKey", "")
path = urllib.parse.unquote(urllib.parse.urlparse(url).path)
container = path.split("/Documents/", 1)[0]
report = {"messages": messages, "uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups()}
with open(path, "rb") as document:
    report["document"] = document.read().hex()
with open("/proc/self/status") as status:
    report["status"] = [line.rstrip("\n") for line in status
                        if line.split(":")[0] in ("Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs")]
report["containersVisible"] = sorted(os.listdir(os.path.dirname(container)))
try:
    with open(other, "rb") as stolen:
        report["otherContainer"] = f"read {len(stolen.read())} bytes"
except OSError as error:
    report["otherContainer"] = f"{type(error).__name__}: {error.strerror}"

temporary = container + "/Documents/.report.json.tmp"
with open(temporary, "w") as out:
    json.dump(report, out)
os.rename(temporary, container + "/Documents/report.json")
if launch.get("deliveryID"):
    sock.sendall(json.dumps({"type": "ack", "deliveryID": launch["deliveryID"], "handled": True}).encode() + b"\n")
# Stay subscribed, as a running app does.
while stream.readline():
    pass
