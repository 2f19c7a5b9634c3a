#!/usr/bin/env bash
# Builds docroute_<version>_amd64.deb with Debian's own tools (dpkg-buildpackage, debhelper's dh)
# from debian/, then checks it with lintian: any error or warning fails (debian/*.lintian-overrides
# holds the accepted ones, each with its reason).
#
# usage: scripts/build-deb.sh [OUTDIR]     (default: the repository's top folder)
# environment:
#   DOCROUTE_BINDIR        the static release build to package (default: scripts/release-build.sh
#                          builds it; the container test passes its own, so nothing builds twice)
#   DOCROUTE_DEB_REVISION  appended to the version (e.g. +rebuild1), for an upgrade test
#   DOCROUTE_LINTIAN=0     skip lintian
# The package is built in .build-deb/ (a copy of debian/ beside the checkout), so the checkout
# gets none of dpkg-buildpackage's files and the version can change without touching it.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$repo}
work="$repo/.build-deb"
stage="$work/docroute"

for tool in dpkg-buildpackage dh lintian; do
    command -v "$tool" >/dev/null || { echo "error: $tool is missing; run 'make deb' (it installs debhelper, dpkg-dev and lintian)" >&2; exit 2; }
done
rm -rf "$work"
mkdir -p "$stage"
cp -a "$repo/debian" "$stage/debian"
version=$(dpkg-parsechangelog -l "$stage/debian/changelog" -S Version)
if [ -n "${DOCROUTE_DEB_REVISION:-}" ]; then
    maintainer=$(dpkg-parsechangelog -l "$stage/debian/changelog" -S Maintainer)
    version="$version$DOCROUTE_DEB_REVISION"
    {
        printf 'docroute (%s) unstable; urgency=medium\n\n  * Rebuilt from the same sources.\n\n -- %s  %s\n\n' \
            "$version" "$maintainer" "$(date -R)"
        cat "$repo/debian/changelog"
    } >"$stage/debian/changelog"
fi

if [ -n "${DOCROUTE_BINDIR:-}" ]; then
    bindir=$DOCROUTE_BINDIR
else
    echo "release build (log: $work/build.log)"
    bindir=$("$repo/scripts/release-build.sh" "$work/build.log") || { tail -30 "$work/build.log" >&2; exit 1; }
fi

echo "dpkg-buildpackage -b for docroute $version (log: $work/dpkg-buildpackage.log)"
if ! (cd "$stage" && DOCROUTE_REPO="$repo" DOCROUTE_BINDIR="$bindir" dpkg-buildpackage -b --no-sign) >"$work/dpkg-buildpackage.log" 2>&1; then
    tail -40 "$work/dpkg-buildpackage.log" >&2
    echo "error: dpkg-buildpackage failed (log above)" >&2
    exit 1
fi
arch=$(dpkg --print-architecture)
deb="docroute_${version}_${arch}.deb"
mkdir -p "$out"
mv "$work/$deb" "$out/$deb"
echo "built $out/$deb ($(du -h "$out/$deb" | cut -f1))"

if [ "${DOCROUTE_LINTIAN:-1}" != 0 ]; then
    echo "lintian $deb"
    if ! lintian --fail-on error,warning --display-info --show-overrides "$out/$deb"; then
        echo "error: lintian found errors or warnings not overridden in debian/docroute.lintian-overrides" >&2
        exit 1
    fi
    echo "lintian: no errors, no warnings left"
fi
