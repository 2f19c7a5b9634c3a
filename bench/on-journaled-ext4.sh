#!/usr/bin/env bash
# Runs `docroute-bench ARGS…` with its trees on a fresh ext4 file system made with mkfs.ext4's
# defaults (so with a journal), in a 6 GiB image file on the same disk as the working folder,
# loop-mounted for the run and removed after it. The image is allocated in full and the loop
# device reads and writes it with direct I/O, so that a flush of the image's file system is one
# flush of the disk: a sparse image behind the page cache would add the backing file's own
# writeback and block allocation to every fsync, a cost no real disk has.
#
# Why: this machine's root file system is ext4 *without* a journal. There the kernel, before it
# hands out an inode, skips every inode of the block group freed in the last 30 seconds
# (recently_deleted() in fs/ext4/ialloc.c, a scan that only journal-less ext4 does), so each new
# file costs time in proportion to the files removed just before: exactly what an inbox that is
# emptied as fast as it fills does. A default ext4, as Debian's installer makes it, does not.
# Needs root (losetup, mount). Usage: bench/on-journaled-ext4.sh compare --files 10000 …
# or, for any other benchmark that reads DOCROUTE_BENCH_DIR (the fleet's):
#     bench/on-journaled-ext4.sh -- bench/fleet-latency.py <docrouted> --rounds=3
# --places "pg a b" gives each name a journaled file system of its own (2 GiB each) and passes
# them as DOCROUTE_BENCH_PLACES: the fleet's benchmarks then keep PostgreSQL and each host on its
# own, as separate machines would, and one host's `syncfs` no longer flushes the others' writes.
#     bench/on-journaled-ext4.sh --places "pg a b" -- bench/fleet-latency.py <docrouted>
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "on-journaled-ext4.sh: needs root (it loop-mounts an image)" >&2; exit 77; }
here="$(cd "$(dirname "$0")/.." && pwd)"
places=()
if [ "${1:-}" = "--places" ]; then
    read -r -a places <<< "${2:?--places needs names, e.g. \"pg a b\"}"
    shift 2
fi
command=()
if [ "${1:-}" = "--" ]; then
    shift
    command=("$@")
else
    bin="$(cd "$here" && swift build -c release --show-bin-path)"
    command=("$bin/docroute-bench" "$@")
fi
work="$here/.build-bench/journaled-ext4"
mkdir -p "$work"
devices=()
mounts=()
cleanup() {
    for mount in "${mounts[@]}"; do mountpoint -q "$mount" && umount "$mount"; done
    for device in "${devices[@]}"; do losetup -d "$device"; done
    rm -f "$work"/*.img
}
trap cleanup EXIT
# make_file_system NAME SIZE: a journaled ext4 at $work/NAME, mounted.
make_file_system() {
    local name=$1 size=$2 device
    mkdir -p "$work/$name"
    rm -f "$work/$name.img"
    fallocate -l "$size" "$work/$name.img"
    device="$(losetup --find --show --direct-io=on "$work/$name.img")"
    devices+=("$device")
    # Inode tables and journal written now, not by ext4lazyinit in the background of the run.
    mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$device"
    mount "$device" "$work/$name"
    mounts+=("$work/$name")
    echo "$name on $(findmnt -no SOURCE,FSTYPE,OPTIONS "$work/$name")" >&2
}
make_file_system mnt 6G
places_text=""
for place in "${places[@]}"; do
    make_file_system "place-$place" 2G
    places_text+="$place=$work/place-$place "
done
cd "$here"
DOCROUTE_BENCH_DIR="$work/mnt" DOCROUTE_BENCH_PLACES="$places_text" "${command[@]}"
