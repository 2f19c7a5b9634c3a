#!/usr/bin/env bash
# Writes docroute's man pages into OUTDIR: docrouted.8 and docroutectl.1 from the binaries'
# argument parsers (swift-argument-parser's generate-manual, which reads --experimental-dump-help),
# joined with their hand-written sections (docs/man/NAME.SECTION.tail: ENVIRONMENT, FILES, EXIT
# STATUS, EXAMPLES, SEE ALSO, which replace the generated EXIT STATUS), and docroute.toml.5, written
# by hand whole. scripts/install.sh installs what it writes; `make man` writes them to .build/man.
#
# usage: scripts/make-man.sh BINDIR OUTDIR
#   BINDIR  folder holding docrouted, docroutectl and generate-manual
#   OUTDIR  where the pages go (created); read one with man -l OUTDIR/docroutectl.1
set -euo pipefail

if [ $# -ne 2 ]; then
    sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
bin_dir=$1
out=$2
repo=$(cd "$(dirname "$0")/.." && pwd)
if [ ! -x "$bin_dir/generate-manual" ]; then
    echo "error: $bin_dir/generate-manual is missing; build it (swift build --product generate-manual)" >&2
    exit 1
fi
install -d -m 0755 "$out"
# A fixed date keeps the pages reproducible: SOURCE_DATE_EPOCH, else the last commit's.
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$repo" log -1 --format=%ct 2>/dev/null || date +%s)}
pages=$(mktemp -d)
trap 'rm -rf "$pages"' EXIT
for page in docrouted:8 docroutectl:1; do
    name=${page%:*}
    section=${page#*:}
    "$bin_dir/generate-manual" "$bin_dir/$name" --section "$section" --date "$(date -u -d "@$epoch" +%F)" -o "$pages"
    generated="$pages/$name.$section"
    [ -f "$generated" ] || generated="$pages/$name.1"
    # A command whose only subcommand is the parser's own `help` has no subcommand to show.
    if [ "$(grep -c '^\.It Em ' "$generated")" = 1 ] && grep -q '^\.It Em help$' "$generated"; then
        sed -i -e '/^\.Ar subcommand$/d' -e '/^\.It Em help$/,/^\.El$/d' "$generated"
    fi
    # A blank line between paragraphs of a discussion is a warning to mdoc; .Pp is its paragraph break.
    {
        sed -e 's/^$/.Pp/' -e '/^\.Sh "EXIT STATUS"$/,$d' "$generated"
        cat "$repo/docs/man/$name.$section.tail"
    } >"$out/$name.$section"
    chmod 0644 "$out/$name.$section"
done
install -m 0644 "$repo/docs/man/docroute.toml.5" "$out/docroute.toml.5"
