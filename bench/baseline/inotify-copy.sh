#!/bin/sh
# The script an administrator writes instead of docroute, kept as the thing to beat: the rate a
# service must clearly pass to be worth installing.
#
#   inotify-copy.sh INBOX TARGET SOCKET
#
# Every file closed after writing or moved into INBOX is copied into TARGET, and one JSON line
# naming the copy goes to the Unix socket SOCKET through socat, one connection per file.
# Deliberately as written in the wild: no fsync, no scan of files already waiting, and nothing
# notices when the kernel's inotify queue overflows. `docroute-bench compare` runs it on the same
# disk as docrouted and counts what reaches SOCKET. Needs Debian's inotify-tools and socat.
set -u
inbox=$1
target=$2
socket=$3
mkdir -p "$target"

inotifywait -m -e close_write -e moved_to --format '%w%f' "$inbox" |
while IFS= read -r path; do
    name=${path##*/}
    cp -- "$path" "$target/$name" || continue
    printf '{"type":"openURL","url":"file://%s/%s","isFileURL":true}\n' "$target" "$name" |
        socat - "UNIX-CONNECT:$socket"
done
