#!/usr/bin/env bash
# The static release build that the Debian package and the container test ship: docrouted,
# docroutectl and generate-manual (for the man pages), with Swift's runtime linked in (no Swift
# on the target) and hardened linking (full RELRO, BIND_NOW, no RUNPATH into the toolchain).
# Linked by the toolchain's lld with packed relative relocations (DT_RELR, read by glibc 2.36 and
# later) and without exporting the executable's 45,000 symbols (nothing loads code that calls back
# into it): the loader no longer reads 3 MB of relocations and 2.7 MB of dynamic symbols at every
# start, pages that then stay resident (docs/BENCHMARKS.md, "What is resident").
# One command for both, so that `make test` builds it once and `make deb` reuses it.
#
# usage: scripts/release-build.sh [LOG]    prints the folder holding the binaries on stdout;
#                                           the build's own output goes to LOG (default stderr)
# environment: SWIFT (default swift), DOCROUTE_SCRATCH_PATH (swift build --scratch-path)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
log=${1:-/dev/stderr}
build=("${SWIFT:-swift}" build -c release --static-swift-stdlib --package-path "$repo"
    -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now -Xswiftc -no-toolchain-stdlib-rpath
    -Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs -Xlinker --no-export-dynamic)
if [ -n "${DOCROUTE_SCRATCH_PATH:-}" ]; then build+=(--scratch-path "$DOCROUTE_SCRATCH_PATH"); fi
for product in docrouted docroutectl generate-manual; do
    echo "${build[*]} --product $product" >>"$log"
    "${build[@]}" --product "$product" >>"$log" 2>&1
done
"${build[@]}" --show-bin-path
