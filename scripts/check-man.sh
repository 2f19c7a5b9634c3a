#!/usr/bin/env bash
# Renders every man page in DIR with groff (the mandoc macros, which read both man and mdoc pages,
# as man(1) does) with all warnings on, and fails if any page makes groff say anything: a warning
# there is text a reader sees wrong or not at all. `make test` runs it on what `make man` writes.
#
# usage: scripts/check-man.sh DIR
set -euo pipefail

if [ $# -ne 1 ]; then
    sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
command -v groff >/dev/null || { echo "error: groff is missing; install groff-base (make deps)" >&2; exit 2; }
failed=0
checked=0
for page in "$1"/*.[1-9]; do
    [ -f "$page" ] || continue
    checked=$((checked + 1))
    said=$(groff -K utf8 -mandoc -ww -z "$page" 2>&1) || true
    if [ -n "$said" ]; then
        echo "$page: groff warns:" >&2
        printf '%s\n' "$said" | sed 's/^/  /' >&2
        failed=$((failed + 1))
    fi
done
if [ "$checked" = 0 ]; then
    echo "error: no man page in $1; write them first (make man)" >&2
    exit 1
fi
echo "man-pages: $((checked - failed)) passed, $failed failed"
[ "$failed" = 0 ]
