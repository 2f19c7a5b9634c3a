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
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "on-journaled-ext4.sh: needs root (it loop-mounts an image)" >&2; exit 77; }
here="$(cd "$(dirname "$0")/.." && pwd)"
command=()
if [ "${1:-}" = "--" ]; then
    shift
    command=("$@")
else
    bin="$(cd "$here" && swift build -c release --show-bin-path)"
    command=("$bin/docroute-bench" "$@")
fi
work="$here/.build-bench/journaled-ext4"
mkdir -p "$work/mnt"
device=""
cleanup() {
    mountpoint -q "$work/mnt" && umount "$work/mnt"
    [ -n "$device" ] && losetup -d "$device"
    rm -f "$work/ext4.img"
}
trap cleanup EXIT
rm -f "$work/ext4.img"
fallocate -l 6G "$work/ext4.img"
device="$(losetup --find --show --direct-io=on "$work/ext4.img")"
# Inode tables and journal written now, not by ext4lazyinit in the background of the run.
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$device"
mount "$device" "$work/mnt"
echo "benchmark trees on $(findmnt -no SOURCE,FSTYPE,OPTIONS "$work/mnt")" >&2
cd "$here"
DOCROUTE_BENCH_DIR="$work/mnt" "${command[@]}"
