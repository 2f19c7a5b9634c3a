#!/bin/sh
# A docroute handler as a shell script, for `docroutectl subscribe --exec`: it prints what it got
# and accepts Protein Data Bank files. docroutectl runs it once per document with the local path
# (or, for a custom-scheme URL, the URL) as its last argument; exit 0 acknowledges the document
# as handled, any other status as declined (handled:false). Either way it is not sent again.
#
#   .build/debug/docroutectl subscribe com.sunsetlakesoftware.molecules \
#       --socket run/run/docroute.sock --exec examples/molecules-handler.sh
#
# Its standard output goes to docroutectl's standard error; docroutectl's own standard output
# stays one JSON line per event.
set -u
target=${1:?usage: molecules-handler.sh PATH-OR-URL}

echo "molecules-handler: $DOCROUTE_EVENT, delivery $DOCROUTE_DELIVERY_ID"
echo "  argument:     $target"
echo "  url:          $DOCROUTE_URL"
echo "  content type: ${DOCROUTE_CONTENT_TYPE:-(none: a custom-scheme URL)}"
echo "  mailbox:      ${DOCROUTE_MAILBOX:-(none)}"
echo "  from:         ${DOCROUTE_SOURCE_APPLICATION:-(unknown)}"

[ -f "$target" ] || exit 0          # a URL: nothing to read, take it

case $target in
    *.gz) show() { gzip -dc -- "$target"; } ;;
    *)    show() { cat -- "$target"; } ;;
esac
echo "  size:         $(wc -c < "$target") bytes"
show | head -n 3 | sed 's/^/  | /'

# The seed's Molecules returns NO from openURL for a file it cannot read; so does this.
if show | grep -q '^\(HEADER\|ATOM  \|HETATM\|COMPND\)'; then
    echo "  a PDB structure: handled"
    exit 0
fi
echo "  not a PDB structure: declined"
exit 1
