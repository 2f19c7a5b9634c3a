#!/usr/bin/env bash
# Installs docroute: the two binaries with their man pages and bash/zsh/fish
# completions, the systemd units, sysusers.d, tmpfiles.d and catalog files, and
# the default configuration (never over an existing one).
#
# usage: scripts/install.sh PREFIX DESTDIR [BINDIR]
#   PREFIX   where programs and units go, e.g. /usr or /usr/local
#   DESTDIR  staging root for packaging; "" or / installs into the running system
#   BINDIR   folder holding docrouted and docroutectl, and generate-manual for
#            the man pages (default: `swift build -c release --show-bin-path`)
# Configuration always goes to DESTDIR/etc/docroute, the path the units name.
set -euo pipefail

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
prefix=${1%/}
destdir=${2%/}
repo=$(cd "$(dirname "$0")/.." && pwd)
case "$prefix" in
/*) ;;
*)
    echo "error: PREFIX must be an absolute path, not '$1'" >&2
    exit 2
    ;;
esac

if [ $# -eq 3 ]; then
    bin_dir=$3
else
    bin_dir=$(cd "$repo" && swift build -c release --show-bin-path)
fi
for name in docrouted docroutectl; do
    if [ ! -x "$bin_dir/$name" ]; then
        echo "error: $bin_dir/$name is missing; build first (swift build -c release) or pass BINDIR" >&2
        exit 1
    fi
done

root="$destdir"
unit_dir="$root$prefix/lib/systemd/system"
etc_dir="$root/etc/docroute"

echo "installing docroute into ${destdir:-/} with prefix $prefix"
install -d -m 0755 "$root$prefix/bin" "$unit_dir" "$root$prefix/lib/sysusers.d" \
    "$root$prefix/lib/tmpfiles.d"
install -m 0755 "$bin_dir/docrouted" "$root$prefix/bin/docrouted"
install -m 0755 "$bin_dir/docroutectl" "$root$prefix/bin/docroutectl"

# Man pages: written by scripts/make-man.sh (the options from the argument parser of the binaries
# just installed, the hand-written sections from docs/man), then installed by section.
man_root="$root$prefix/share/man"
install -d -m 0755 "$man_root/man1" "$man_root/man5" "$man_root/man8" "$root$prefix/share/bash-completion/completions" \
    "$root$prefix/share/zsh/site-functions" "$root$prefix/share/fish/vendor_completions.d"
pages=$(mktemp -d)
trap 'rm -rf "$pages"' EXIT
if [ -x "$bin_dir/generate-manual" ]; then
    "$repo/scripts/make-man.sh" "$bin_dir" "$pages"
    install -m 0644 "$pages/docrouted.8" "$man_root/man8/docrouted.8"
    install -m 0644 "$pages/docroutectl.1" "$man_root/man1/docroutectl.1"
else
    echo "warning: $bin_dir/generate-manual is missing (swift build -c release --product generate-manual); no man pages for the commands installed" >&2
fi
install -m 0644 "$repo/docs/man/docroute.toml.5" "$man_root/man5/docroute.toml.5"
for name in docrouted docroutectl; do
    "$bin_dir/$name" --generate-completion-script bash >"$root$prefix/share/bash-completion/completions/$name"
    "$bin_dir/$name" --generate-completion-script zsh >"$root$prefix/share/zsh/site-functions/_$name"
    "$bin_dir/$name" --generate-completion-script fish >"$root$prefix/share/fish/vendor_completions.d/$name.fish"
    chmod 0644 "$root$prefix/share/bash-completion/completions/$name" "$root$prefix/share/zsh/site-functions/_$name" \
        "$root$prefix/share/fish/vendor_completions.d/$name.fish"
done

# The units name /usr/bin and /usr/share/doc; a different prefix must be what they run and point to.
for unit in docroute.service docroute.socket docroute-handler@.service docroute-handler@.path; do
    sed -e "s|/usr/bin/docroute|$prefix/bin/docroute|g" -e "s|file:///usr/share/doc/docroute/|file://$prefix/share/doc/docroute/|g" \
        "$repo/systemd/$unit" >"$unit_dir/$unit.tmp"
    chmod 0644 "$unit_dir/$unit.tmp"
    mv "$unit_dir/$unit.tmp" "$unit_dir/$unit"
done
install -m 0644 "$repo/systemd/docroute.sysusers" "$root$prefix/lib/sysusers.d/docroute.conf"
install -m 0644 "$repo/systemd/docroute.tmpfiles" "$root$prefix/lib/tmpfiles.d/docroute.conf"
# journalctl reads catalogs from /usr/lib (and /usr/local/lib) only.
install -d -m 0755 "$root$prefix/lib/systemd/catalog"
install -m 0644 "$repo/systemd/docroute.catalog" "$root$prefix/lib/systemd/catalog/docroute.catalog"

# Configuration: readable by the daemon (group docroute once sysusers ran), and
# an admin's edited file always wins over the default.
install -d -m 0755 "$etc_dir" "$etc_dir/handlers.d" "$etc_dir/handlers"
if [ -e "$etc_dir/docroute.toml" ]; then
    echo "kept existing $etc_dir/docroute.toml"
elif [ -f "$repo/config/docroute.toml" ]; then
    install -m 0644 "$repo/config/docroute.toml" "$etc_dir/docroute.toml"
else
    echo "warning: $repo/config/docroute.toml not found; no configuration installed" >&2
fi

for doc in README.md PROTOCOL.md docs/PROTOCOL.md; do
    if [ -f "$repo/$doc" ]; then
        install -d -m 0755 "$root$prefix/share/doc/docroute"
        install -m 0644 "$repo/$doc" "$root$prefix/share/doc/docroute/$(basename "$doc")"
    fi
done

echo "installed: $prefix/bin/{docrouted,docroutectl}, man pages (docrouted.8, docroutectl.1, docroute.toml.5), shell completions,"
echo "           units in $prefix/lib/systemd/system, sysusers.d, tmpfiles.d, catalog, /etc/docroute"
if [ -z "$destdir" ] || [ "$destdir" = / ]; then
    cat <<EOF
next, as root:
  systemd-sysusers docroute.conf && systemd-tmpfiles --create docroute.conf
  journalctl --update-catalog && systemctl daemon-reload
  systemctl enable --now docroute.socket docroute.service
EOF
fi
