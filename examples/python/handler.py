#!/usr/bin/env python3
"""A docroute handler in Python, written with the docroute package (Clients/Python).

It subscribes as a handler, prints each document as one line ("launch <url> <type>" or
"openURL <url> <type>"), acknowledges it as handled, and exits after --count documents (0: run
forever, reconnecting whenever docrouted restarts).

    pip install ./Clients/Python        # or run it from a checkout as it is
    python3 examples/python/handler.py --bundle com.sunsetlakesoftware.molecules

It is also a small Open In... client: --list PATH|URL prints the daemon's `candidates` reply
(every handler that could open it, best first), --open PATH|URL [--with BUNDLE_ID] sends it
(to that handler). A file goes as an open descriptor passed with SCM_RIGHTS whenever the daemon
offers `open-descriptor`, so the daemon needs no right of its own to read it.

    python3 examples/python/handler.py --list ./1abc.pdb
    python3 examples/python/handler.py --open ./1abc.pdb --with org.docroute.textviewer
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

try:
    import docroute
except ImportError:
    # Run from a checkout without installing: use the package beside it.
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Clients", "Python", "src"))
    import docroute


class PrintingHandler(docroute.DocumentHandler):
    """Prints every document, takes it, and stops the runner after `count` of them."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.seen = 0
        self.runner: docroute.HandlerRunner | None = None

    def did_finish_launching(self, launch: docroute.Launch) -> bool:
        if launch.document is None:
            return True  # a plain launch: nothing to open, nothing to acknowledge
        return self.show("launch", launch.document)

    def open_document(self, document: docroute.Document) -> bool:
        return self.show("openURL", document)

    def show(self, kind: str, document: docroute.Document) -> bool:
        print(f"{kind} {document.url} {document.content_type or ''}", flush=True)
        self.seen += 1
        if self.count and self.seen >= self.count and self.runner is not None:
            self.runner.stop()  # after this document's acknowledgement
        return True


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--socket", default=docroute.default_socket_path())
    parser.add_argument("--bundle", default=os.environ.get("DOCROUTE_BUNDLE_IDENTIFIER"))
    parser.add_argument("--count", type=int, default=0)
    parser.add_argument("--list", metavar="PATH_OR_URL", help="print every handler that could open it (Open In...)")
    parser.add_argument("--open", metavar="PATH_OR_URL", help="send it to its handler (or the one --with names)")
    parser.add_argument("--with", dest="with_bundle", metavar="BUNDLE_ID", help="with --open: the handler to send it to")
    args = parser.parse_args()
    try:
        if args.list or args.open:
            return open_in(args)
        if not args.bundle:
            parser.error("--bundle (or DOCROUTE_BUNDLE_IDENTIFIER) is needed to subscribe")
        handler = PrintingHandler(args.count)
        handler.runner = docroute.HandlerRunner(args.bundle, handler, socket_path=args.socket)
        handler.runner.run()
        return 0
    except docroute.DocRouteError as error:
        if args.list or args.open:
            # The same JSON line as the replies above, so a script reads either the same way.
            print(json.dumps({"type": "error", "code": error.code, "message": error.message}), flush=True)
        else:
            print(f"error {error.code}: {error.message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def open_in(args: argparse.Namespace) -> int:
    target: str = args.list or args.open
    is_url = ":" in target and not os.path.exists(target)
    with docroute.connect(args.socket) as connection:
        reply: dict[str, Any]
        if args.list:
            if is_url and docroute.is_file_url(target):
                listed = connection.candidates_for_file(docroute.path_from_file_url(target))
            elif is_url:
                listed = connection.candidates(target)
            else:
                listed = connection.candidates_for_file(target)
            reply = {
                "type": "candidates",
                "contentType": listed.content_type,
                "candidates": [
                    {
                        "bundleIdentifier": candidate.bundle_identifier,
                        "name": candidate.name,
                        "matchedType": candidate.matched_type,
                        "rank": candidate.rank,
                        "role": candidate.role,
                        "default": candidate.is_default,
                    }
                    for candidate in listed.candidates
                ],
            }
        else:
            if is_url and docroute.is_file_url(target):
                opened = connection.open_file(docroute.path_from_file_url(target), bundle_identifier=args.with_bundle)
            elif is_url:
                opened = connection.open(target, bundle_identifier=args.with_bundle)
            else:
                opened = connection.open_file(target, bundle_identifier=args.with_bundle)
            reply = {
                "type": "opened",
                "deliveryID": opened.delivery_id,
                "bundleIdentifier": opened.bundle_identifier,
                "contentType": opened.content_type,
            }
    print(json.dumps(reply), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
