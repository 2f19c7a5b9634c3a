#!/usr/bin/env bash
# Runs docroute under a real systemd: boots a throwaway Debian container with
# systemd-nspawn, installs the release binaries and units with scripts/install.sh,
# and checks socket activation, delivery, the journal fields and the watchdog.
#
# usage: scripts/systemd-container-test.sh        (as root)
#
# Exit status: 0 all checks passed, 1 a check failed, 77 skipped (not root, the
# tools cannot be installed, or Debian's mirror cannot be reached).
#
# Environment:
#   DOCROUTE_SKIP_CONTAINER=1   skip at once (exit 77)
#   DOCROUTE_CONTAINER_CACHE    where the root-file-system tarball is kept
#                               (default: .build-container in the repository)
#   DOCROUTE_DEBIAN_MIRROR      mirror for debootstrap (default http://deb.debian.org/debian)
#   DOCROUTE_BINDIR             use docrouted/docroutectl from here instead of building
#   DOCROUTE_SCRATCH_PATH       swift build --scratch-path for the release build
#                               (default: the package's .build)
#   DOCROUTE_CONTAINER_CLIENT   "host" (default when the host has python3): the test
#                               client connects through /proc/<leader>/root; "container":
#                               it runs inside the container
#
# The container's root is a fresh copy of the cached tree booted with
# --volatile=overlay, so nothing of the host's file system is ever booted and
# nothing the container does outlives it.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
helpers="$repo/scripts/systemd-container"
suite=bookworm
# procps: docroute.service reloads with /bin/kill, which minbase lacks; any real
# Debian system (and a docroute package's Depends:) has it.
include=systemd,systemd-sysv,dbus,libsqlite3-0,python3,procps
mirror=${DOCROUTE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${DOCROUTE_CONTAINER_CACHE:-$repo/.build-container}
machine="docroute-test-$$"
molecules=com.sunsetlakesoftware.molecules
script_start=$(date +%s)

work=""
nspawn_pid=""
leader=""
failures=0
declare -a summary=()
declare -a timings=()

say() { printf '==> %s\n' "$*"; }
skip() {
    printf 'SKIP: %s\n' "$*"
    exit 77
}
pass() {
    summary+=("PASS  $1")
    printf 'PASS: %s\n' "$1"
}
fail() {
    summary+=("FAIL  $1")
    printf 'FAIL: %s\n' "$1" >&2
    failures=$((failures + 1))
}
report() {
    [ ${#summary[@]} -gt 0 ] || return 0
    echo
    echo "summary ($machine, $(($(date +%s) - script_start)) s in all):"
    printf '  %s\n' "${summary[@]}"
    echo "timings:"
    printf '  %s\n' "${timings[@]}"
}
# A failure that leaves nothing sensible to check after it.
abort() {
    fail "$1"
    report
    echo "FAIL: stopped after: $1"
    exit 1
}
phase_start=$(date +%s)
timed() {
    local now
    now=$(date +%s)
    timings+=("$(printf '%4ds  %s' $((now - phase_start)) "$1")")
    phase_start=$now
}

if [ "${DOCROUTE_SKIP_CONTAINER:-}" = 1 ]; then
    skip "DOCROUTE_SKIP_CONTAINER=1"
fi
if [ "$(id -u)" != 0 ]; then
    skip "needs root (debootstrap, systemd-nspawn, nsenter)"
fi

# ---------------------------------------------------------------------------
# Tools
missing=()
command -v debootstrap >/dev/null || missing+=(debootstrap)
command -v systemd-nspawn >/dev/null || missing+=(systemd-container)
command -v nsenter >/dev/null || missing+=(util-linux)
if [ ${#missing[@]} -gt 0 ]; then
    say "installing ${missing[*]}"
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1; then
        DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null 2>&1 || true
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
            skip "cannot install ${missing[*]} with apt-get"
    fi
fi
python=$(command -v python3 || true)
client_side=${DOCROUTE_CONTAINER_CLIENT:-$([ -n "$python" ] && echo host || echo container)}

# ---------------------------------------------------------------------------
# Clean-up: power the container off, wait for nspawn, only then remove its tree.
in_container() {
    nsenter --target "$leader" --all --root --wd \
        env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        SYSTEMD_PAGER= SYSTEMD_COLORS=0 TERM=dumb LANG=C.UTF-8 "$@"
}

wait_for_nspawn() {
    local seconds=$1
    for _ in $(seq $((seconds * 10))); do
        kill -0 "$nspawn_pid" 2>/dev/null || return 0
        sleep 0.1
    done
    return 1
}

# Mounts a failed debootstrap may leave behind (proc, sys, dev/pts under the new root).
unmount_under() {
    local target
    awk -v prefix="$1/" 'index($5, prefix) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
        while read -r target; do umount -l "$target" 2>/dev/null; done
}

cleanup() {
    local status=$?
    set +e
    if [ -n "$nspawn_pid" ] && kill -0 "$nspawn_pid" 2>/dev/null; then
        say "powering the container off"
        local asked=no
        if [ -n "$leader" ] && kill -0 "$leader" 2>/dev/null && in_container systemctl --no-block poweroff >/dev/null 2>&1; then
            asked=yes
        fi
        if [ "$asked" = no ] || ! wait_for_nspawn 60; then
            # systemd as PID 1 powers off on SIGRTMIN+4.
            [ -n "$leader" ] && kill -s RTMIN+4 "$leader" 2>/dev/null
            if ! wait_for_nspawn 30; then
                echo "warning: container did not power off; killing its init (pid $leader)" >&2
                [ -n "$leader" ] && kill -s KILL "$leader" 2>/dev/null
                wait_for_nspawn 30 || kill -s KILL "$nspawn_pid" 2>/dev/null
            fi
        fi
        wait "$nspawn_pid" 2>/dev/null
    fi
    if [ -n "$work" ] && [ -d "$work" ]; then
        case "$work" in
        "$cache"/run.*)
            if grep -q " $work" /proc/self/mountinfo; then
                echo "warning: something is still mounted under $work; not removing it" >&2
            else
                rm -rf --one-file-system "$work"
            fi
            ;;
        esac
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$cache"
work=$(mktemp -d "$cache/run.XXXXXX")
root="$work/root"
console="$work/console.log"

# ---------------------------------------------------------------------------
# Root file system: debootstrap once, then a cached tarball keyed on what it holds.
key=$(printf '%s\n' "$suite" minbase "$include" | sha256sum | cut -c1-16)
tarball="$cache/rootfs-$suite-minbase-$key.tar"
if [ ! -s "$tarball" ]; then
    say "debootstrap $suite ($include) — once, then cached as $tarball"
    fresh="$work/debootstrap"
    if ! debootstrap --variant=minbase --include="$include" "$suite" "$fresh" "$mirror" >"$work/debootstrap.log" 2>&1; then
        tail -5 "$work/debootstrap.log" >&2
        unmount_under "$fresh"
        skip "debootstrap of $suite from $mirror failed (no network to the mirror?); log above"
    fi
    # A fixed machine id would make every boot share one journal directory; let each boot make one.
    : >"$fresh/etc/machine-id"
    tar --numeric-owner --xattrs --acls -C "$fresh" -cf "$tarball.tmp" .
    mv "$tarball.tmp" "$tarball"
    rm -rf --one-file-system "$fresh"
fi
mkdir "$root"
tar --numeric-owner --xattrs --acls -C "$root" -xpf "$tarball"
timed "root file system"

# Never boot the host: the tree must be a separate directory that looks like a Debian root.
if [ "$(stat -c %d:%i "$root")" = "$(stat -c %d:%i /)" ] || [ ! -x "$root/lib/systemd/systemd" ] || [ ! -f "$root/etc/os-release" ]; then
    echo "error: $root is not a container root file system; refusing to boot it" >&2
    exit 1
fi

# ---------------------------------------------------------------------------
# Release binaries, static Swift runtime (the container has no Swift).
if [ -n "${DOCROUTE_BINDIR:-}" ]; then
    bin_dir=$DOCROUTE_BINDIR
else
    build=(swift build -c release --static-swift-stdlib --package-path "$repo")
    if [ -n "${DOCROUTE_SCRATCH_PATH:-}" ]; then build+=(--scratch-path "$DOCROUTE_SCRATCH_PATH"); fi
    say "release build: ${build[*]}"
    if ! "${build[@]}" --product docrouted >"$work/build.log" 2>&1 || ! "${build[@]}" --product docroutectl >>"$work/build.log" 2>&1; then
        tail -30 "$work/build.log" >&2
        abort "the release build (log above)"
    fi
    bin_dir=$("${build[@]}" --show-bin-path)
fi
timed "release build"

# ---------------------------------------------------------------------------
# Install into the container's tree the way a package would.
"$repo/scripts/install.sh" /usr "$root" "$bin_dir" >"$work/install.log"
install -m 0644 "$repo"/config/handlers/*.plist "$root/etc/docroute/handlers.d/"
# A handler with an unprivileged user of its own, which sysusers creates at boot.
install -m 0644 "$helpers/test-viewer.plist" "$root/etc/docroute/handlers.d/test-viewer.plist"
install -D -m 0644 "$helpers/test-viewer.sysusers" "$root/etc/sysusers.d/docroute-test-viewer.conf"
missing_libraries=$(chroot "$root" /usr/bin/ldd /usr/bin/docrouted /usr/bin/docroutectl 2>&1 | grep 'not found' || true)
if [ -n "$missing_libraries" ]; then
    abort "binaries run in the container (missing: $(echo "$missing_libraries" | awk '{print $1}' | sort -u | tr '\n' ' '))"
fi
pass "static release binaries need only the container's libraries ($(chroot "$root" /usr/bin/ldd /usr/bin/docrouted | awk '{print $1}' | tr '\n' ' '))"
timed "install"

# ---------------------------------------------------------------------------
# Boot.
say "booting $machine"
# --private-network: the container needs none, and with its own network namespace
# systemd in it may set up PrivateNetwork= for the service.
systemd-nspawn --boot --volatile=overlay --register=no --keep-unit --private-network \
    --console=read-only -D "$root" --machine="$machine" </dev/null >"$console" 2>&1 &
nspawn_pid=$!

# The container's init is the child of nspawn that lives in another pid namespace.
host_pidns=$(readlink /proc/self/ns/pid)
find_leader() {
    local stat pid fields
    for stat in /proc/[0-9]*/stat; do
        read -r -a fields <"$stat" 2>/dev/null || continue
        # Field 4 is the parent; the command name (field 2) has no spaces here.
        [ "${fields[3]:-}" = "$nspawn_pid" ] || continue
        pid=${fields[0]}
        if [ "$(readlink "/proc/$pid/ns/pid" 2>/dev/null)" != "$host_pidns" ]; then
            echo "$pid"
            return 0
        fi
    done
    return 1
}
# A loaded two-core machine (a build beside it) has taken over 30 s to get this far: wait up to
# DOCROUTE_BOOT_TIMEOUT seconds (default 180), in tenths.
boot_ticks=$(( ${DOCROUTE_BOOT_TIMEOUT:-180} * 10 ))
for _ in $(seq "$boot_ticks"); do
    if [ -z "$leader" ]; then leader=$(find_leader || true); fi
    [ -n "$leader" ] && [ -d "/proc/$leader/root/run/systemd/system" ] && break
    if ! kill -0 "$nspawn_pid" 2>/dev/null; then
        tail -20 "$console" >&2
        abort "systemd-nspawn started the container (console above)"
    fi
    sleep 0.1
done
if [ -z "$leader" ] || [ ! -d "/proc/$leader/root/run/systemd/system" ]; then
    tail -20 "$console" >&2
    abort "the container's systemd came up within ${DOCROUTE_BOOT_TIMEOUT:-180} s"
fi
# /run/systemd/system comes before systemd's private bus socket, which systemctl needs.
for _ in $(seq "$boot_ticks"); do
    [ -S "/proc/$leader/root/run/systemd/private" ] && break
    sleep 0.1
done
state=$(timeout "${DOCROUTE_BOOT_TIMEOUT:-180}" nsenter --target "$leader" --all --root --wd env -i PATH=/usr/bin:/bin systemctl is-system-running --wait 2>&1 || true)
case "$state" in
running) pass "container booted (systemd $(in_container systemctl --version | awk 'NR==1{print $2}'), state running)" ;;
degraded)
    pass "container booted (state degraded: $(in_container systemctl list-units --failed --plain --no-legend | awk '{print $1}' | tr '\n' ' '))"
    ;;
*)
    tail -20 "$console" >&2
    abort "container booted (systemctl is-system-running: $state)"
    ;;
esac
timed "boot"
ctr=/proc/$leader/root

# ---------------------------------------------------------------------------
# The units as installed: sysusers, tmpfiles, socket activation.
in_container journalctl --update-catalog >/dev/null 2>&1 || true
if in_container getent passwd docroute >/dev/null && in_container id -nG docroute | grep -qw docroute-drop; then
    pass "sysusers.d created user docroute (groups: $(in_container id -nG docroute))"
else
    fail "sysusers.d created user docroute in group docroute-drop"
fi
drop_mode=$(in_container stat -c '%a %U:%G' /var/spool/docroute/drop 2>/dev/null || echo missing)
if [ "$drop_mode" = "2770 docroute:docroute-drop" ]; then
    pass "tmpfiles.d created /var/spool/docroute/drop ($drop_mode)"
else
    fail "tmpfiles.d created /var/spool/docroute/drop 2770 docroute:docroute-drop (found: $drop_mode)"
fi

if in_container systemctl enable --now docroute.socket >"$work/enable.log" 2>&1; then
    pass "systemctl enable --now docroute.socket"
else
    abort "systemctl enable --now docroute.socket: $(cat "$work/enable.log")"
fi
service_before=$(in_container systemctl is-active docroute.service || true)

if [ "$client_side" = host ]; then
    # From the host, through the container's root: the peer is root in the host's namespaces.
    sock="$ctr/run/docroute/docroute.sock"
    client_command=("$python" "$helpers/client.py")
else
    sock=/run/docroute/docroute.sock
    install -m 0755 "$helpers/client.py" "$ctr/run/docroute-test-client.py"
    client_command=(in_container python3 /run/docroute-test-client.py)
fi
client() { "${client_command[@]}" "$@"; }
if welcome=$(client hello "$sock" 2>&1) && [ "$(in_container systemctl is-active docroute.service)" = active ]; then
    pass "socket activation: service was $service_before, a connection started it; $welcome"
else
    abort "socket activation ($welcome): $(in_container systemctl status docroute.service --no-pager -n 20 2>&1)"
fi
status_text=$(in_container systemctl show -P StatusText docroute.service)
if [ -n "$status_text" ]; then
    pass "STATUS= reaches systemd: \"$status_text\""
else
    fail "STATUS= reaches systemd (StatusText is empty)"
fi
timed "units and socket activation"

# ---------------------------------------------------------------------------
# A dropped file reaches the handler's sandbox and the handler, and the journal says so.
drop_file() {
    # Kept in $work to compare with the copy; dropped under a hidden name, then renamed, as
    # careful senders do.
    case "$1" in
    *.pdb) printf 'HEADER    %s\nATOM      1  N   ALA A   1      11.104   6.134  -6.504  1.00  0.00           N\nEND\n' "$1" >"$work/$1" ;;
    *) printf 'a note called %s\n' "$1" >"$work/$1" ;;
    esac
    cp "$work/$1" "$ctr/var/spool/docroute/drop/.incoming-$1"
    mv "$ctr/var/spool/docroute/drop/.incoming-$1" "$ctr/var/spool/docroute/drop/$1"
}
sandbox="$ctr/var/lib/docroute/containers/$molecules/Documents/Inbox/Inbox"
viewer=org.docroute.test.viewer
viewer_copy="/var/lib/docroute/containers/$viewer/Documents/Inbox/Inbox/note.dtnote"
wait_for_file() {
    for _ in $(seq $(($2 * 10))); do
        [ -e "$1" ] && return 0
        sleep 0.1
    done
    return 1
}

drop_file 1abc.pdb
if wait_for_file "$sandbox/1abc.pdb" 60 && cmp -s "$work/1abc.pdb" "$sandbox/1abc.pdb"; then
    pass "dropped 1abc.pdb arrived in the sandbox"
else
    fail "dropped 1abc.pdb arrived in $sandbox"
fi
# Copies belong to the handler's user and group (molecules: root), handed over with CAP_CHOWN;
# docrouted (not root) keeps read access through an ACL entry for its own uid, never through a
# group (issue 16: the docroute group is the admin group). Nothing for others.
owner=$(in_container stat -c '%U:%G %a' "${sandbox#"$ctr"}/1abc.pdb" 2>/dev/null || echo missing)
if [ "${owner%% *}" = root:root ] && [ "${owner: -1}" = 0 ]; then
    pass "the copy belongs to the handler's user and group ($owner)"
else
    fail "the copy belongs to the handler's user and group: root:root, nothing for others (found $owner)"
fi

# The shipped configuration's Maildir: a message delivered as an MDA does (tmp/, then a rename
# into new/) has its attachment routed, and ends in cur/ with the S flag, under the hardened unit.
maildir="$ctr/var/spool/docroute/mail"
if wait_for_file "$maildir/new" 30; then
    base64 "$work/1abc.pdb" >"$work/mail-attachment.b64"
    {
        printf 'From: sender@example.org\r\nSubject: a molecule\r\nMessage-ID: <container-1@example.org>\r\n'
        printf 'MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n'
        printf -- '--b\r\nContent-Type: text/plain\r\n\r\nattached\r\n'
        printf -- '--b\r\nContent-Type: chemical/x-pdb\r\nContent-Disposition: attachment; filename="mail.pdb"\r\n'
        printf 'Content-Transfer-Encoding: base64\r\n\r\n'
        sed 's/$/\r/' "$work/mail-attachment.b64"
        printf -- '--b--\r\n'
    } >"$maildir/tmp/1700000000.M1P1.container"
    mv "$maildir/tmp/1700000000.M1P1.container" "$maildir/new/1700000000.M1P1.container"
    mail_copy="$ctr/var/lib/docroute/containers/$molecules/Documents/Inbox/INBOX/mail.pdb"
    if wait_for_file "$mail_copy" 60 && cmp -s "$work/1abc.pdb" "$mail_copy" \
        && wait_for_file "$maildir/cur/1700000000.M1P1.container:2,S" 30; then
        pass "a mail attachment reached the handler (Documents/Inbox/INBOX/mail.pdb) and the message is in cur/ with S"
    else
        fail "mail attachment delivered and message marked read (copy: $(ls "$(dirname "$mail_copy")" 2>&1 | head -3); new/: $(ls "$maildir/new" | head -3))"
    fi
else
    fail "docrouted created the shipped Maildir's new/ ($(ls -la "$maildir" 2>&1 | head -5))"
fi
if client subscribe "$sock" "$molecules" --expect 1abc.pdb --ack --timeout 60 --linger 1 >"$work/subscribe1.log" 2>&1; then
    first=$(grep -m1 '1abc.pdb' "$work/subscribe1.log")
    pass "subscribed as $molecules: $(echo "$first" | cut -c1-150)…"
else
    fail "subscribed as $molecules and got 1abc.pdb: $(cat "$work/subscribe1.log")"
fi
delivery_id=$(sed -n 's/.*"deliveryID":"\([^"]*\)".*/\1/p' "$work/subscribe1.log" | head -1)

in_container journalctl -u docroute.service -o json --no-pager >"$work/journal.json" 2>&1 || true
if journal_report=$(client journal "$molecules" "$delivery_id" <"$work/journal.json" 2>&1); then
    pass "journal holds the structured entries"
    echo "$journal_report" | sed 's/^/      /'
else
    fail "journal holds DOCROUTE_* fields and MESSAGE_ID: $journal_report"
fi
# The installed catalog explains the entry (journalctl --update-catalog ran after boot).
explained=$(in_container journalctl -x -u docroute.service MESSAGE_ID=31669d38d12b455bb3404bef73eefbfa --no-pager 2>/dev/null | grep -m1 'Subject: Document delivered' || true)
if [ -n "$explained" ]; then
    pass "journalctl -x explains it from docroute.catalog: \"$(echo "$explained" | sed 's/^[^S]*//')\""
else
    fail "journalctl -x explains MESSAGE_ID 31669d38… from docroute.catalog"
fi
# A handler with an unprivileged user: it must be able to read what it is given.
drop_file note.dtnote
if wait_for_file "$ctr$viewer_copy" 60; then
    owner=$(in_container stat -c '%U:%G %a' "$viewer_copy")
    if [ "${owner%%:*}" = docroute-viewer ] && in_container runuser -u docroute-viewer -- cat "$viewer_copy" 2>&1 | cmp -s "$work/note.dtnote" -; then
        pass "a handler running as docroute-viewer owns and reads its copy ($owner)"
    else
        fail "a handler running as docroute-viewer owns and reads its copy (found $owner; as docroute-viewer: $(in_container runuser -u docroute-viewer -- cat "$viewer_copy" 2>&1 | head -1))"
    fi
else
    fail "note.dtnote reached the sandbox of $viewer (a handler with its own user): $(in_container journalctl -u docroute.service -o cat --no-pager | grep -i -m2 'fail\|denied' | tr '\n' ' ')"
fi
# --- docroutectl open as an ordinary user (issue 18; keep this block when rewriting) ---
# docrouted runs as docroute without CAP_SETUID; docroutectl passes the open file over the
# descriptor socket (docroute.socket's second ListenStream), so a file only its user can read
# still arrives. Self-contained: needs $ctr, $work, $molecules, in_container, wait_for_file.
openin_dir=/var/tmp/docroute-openin
in_container install -d -m 0700 -o docroute-viewer -g docroute-viewer "$openin_dir" 2>/dev/null || true
printf 'HEADER    OPENIN\nEND\n' >"$work/openin.pdb"
install -m 0600 "$work/openin.pdb" "$ctr$openin_dir/openin.pdb"
in_container chown docroute-viewer:docroute-viewer "$openin_dir/openin.pdb" 2>/dev/null || true
openin_copy="$ctr/var/lib/docroute/containers/$molecules/Documents/Inbox/Shared/openin.pdb"
if openin_out=$(in_container runuser -u docroute-viewer -- docroutectl open "$openin_dir/openin.pdb" 2>&1) \
    && wait_for_file "$openin_copy" 30 && cmp -s "$work/openin.pdb" "$openin_copy"; then
    pass "docroutectl open as docroute-viewer, a file only it can read: $(echo "$openin_out" | head -1)"
else
    fail "docroutectl open as an ordinary user (docroute-viewer): $openin_out"
fi
timed "delivery and journal"

# ---------------------------------------------------------------------------
# Reload and a clean stop through systemd.
# Waits up to $2 seconds for the unit's ActiveState to be $1.
wait_for_state() {
    for _ in $(seq $(($2 * 10))); do
        [ "$(in_container systemctl show -P ActiveState docroute.service)" = "$1" ] && return 0
        sleep 0.1
    done
    return 1
}
reload_pid=$(in_container systemctl show -P MainPID docroute.service)
# ExecReload= (kill -HUP) returns before the daemon's RELOADING=1 arrives, so the unit may
# show "reloading" for a moment after systemctl returns, until READY=1.
if in_container systemctl reload docroute.service 2>"$work/reload.log" && wait_for_state active 30 &&
    [ "$(in_container systemctl show -P MainPID docroute.service)" = "$reload_pid" ] &&
    in_container journalctl "_PID=$reload_pid" -o cat --no-pager | grep -qi 'reload'; then
    pass "systemctl reload (RELOADING=1 … READY=1), same pid $reload_pid"
else
    fail "systemctl reload: $(tr '\n' ' ' <"$work/reload.log") $(in_container systemctl status docroute.service --no-pager -n 8 2>&1 | tail -8)"
fi

# ---------------------------------------------------------------------------
# The watchdog: a stalled daemon is killed and restarted, and nothing is lost.
mkdir -p "$ctr/etc/systemd/system/docroute.service.d"
cat >"$ctr/etc/systemd/system/docroute.service.d/50-watchdog-test.conf" <<'EOF'
[Service]
WatchdogSec=2s
RestartSec=1s
# The watchdog's SIGABRT would otherwise dump core through the host's core_pattern.
LimitCORE=0
EOF
in_container systemctl daemon-reload
in_container systemctl restart docroute.service
old_pid=$(in_container systemctl show -P MainPID docroute.service)
old_restarts=$(in_container systemctl show -P NRestarts docroute.service)
watchdog_usec=$(in_container systemctl show -P WatchdogUSec docroute.service)
sleep 3
if [ "$(in_container systemctl is-active docroute.service)" = active ] && [ "$(in_container systemctl show -P MainPID docroute.service)" = "$old_pid" ]; then
    pass "pings keep a 2 s watchdog satisfied (WatchdogUSec=$watchdog_usec, pid $old_pid still running after 3 s)"
else
    fail "pings keep a 2 s watchdog satisfied"
fi
stalled_at=$(date +%s)
in_container systemctl kill --kill-whom=main --signal=SIGSTOP docroute.service
drop_file 2abc.pdb
new_pid=$old_pid
for _ in $(seq 600); do
    new_pid=$(in_container systemctl show -P MainPID docroute.service)
    if [ "$new_pid" != "$old_pid" ] && [ "$new_pid" != 0 ] && [ "$(in_container systemctl is-active docroute.service)" = active ]; then break; fi
    sleep 0.1
done
new_restarts=$(in_container systemctl show -P NRestarts docroute.service)
watchdog_log=$(in_container journalctl -u docroute.service --no-pager -o cat --since "@$stalled_at" 2>/dev/null | grep -i -m1 'watchdog' || true)
if [ "$new_pid" != "$old_pid" ] && [ "$new_restarts" = $((old_restarts + 1)) ] && [ -n "$watchdog_log" ]; then
    pass "stalled daemon (SIGSTOP pid $old_pid) restarted by the watchdog in $(($(date +%s) - stalled_at)) s: pid $new_pid, NRestarts $old_restarts→$new_restarts, \"$watchdog_log\""
else
    fail "watchdog restart (pid $old_pid→$new_pid, NRestarts $old_restarts→$new_restarts, log: ${watchdog_log:-none})"
    in_container systemctl status docroute.service --no-pager -n 20 >&2 || true
fi
if wait_for_file "$sandbox/2abc.pdb" 60 && cmp -s "$work/2abc.pdb" "$sandbox/2abc.pdb" && client subscribe "$sock" "$molecules" --expect 2abc.pdb --ack --timeout 60 --linger 2 >"$work/subscribe2.log" 2>&1; then
    if grep -q '1abc.pdb' "$work/subscribe2.log"; then
        fail "the acknowledged 1abc.pdb is never sent again (it was after the restart)"
    else
        pass "nothing lost: 2abc.pdb, dropped while the daemon was stalled, reached the handler after the restart; 1abc.pdb (acknowledged) did not come again"
    fi
else
    fail "2abc.pdb dropped while stalled reached the handler after the restart: $(cat "$work/subscribe2.log" 2>/dev/null)"
fi
timed "watchdog"

# ---------------------------------------------------------------------------
# A stop through systemd is clean: STOPPING=1, exit 0, no failure recorded.
if in_container systemctl stop docroute.service &&
    [ "$(in_container systemctl show -P Result docroute.service)" = success ] &&
    [ "$(in_container systemctl show -P ExecMainStatus docroute.service)" = 0 ]; then
    pass "systemctl stop: exit status 0, Result=success"
else
    fail "systemctl stop (Result=$(in_container systemctl show -P Result docroute.service), status $(in_container systemctl show -P ExecMainStatus docroute.service))"
fi
if [ "$(in_container systemctl is-active docroute.socket)" = active ] && client hello "$sock" >/dev/null 2>&1; then
    pass "after the stop the socket stays and the next connection starts the daemon again"
else
    fail "the socket starts the daemon again after a stop"
fi
in_container journalctl -u docroute.service -u docroute.socket --no-pager -o short-monotonic >"$work/journal.txt" 2>&1 || true
timed "stop"

say "journal of docroute.service (last 25 lines)"
tail -25 "$work/journal.txt" | sed 's/^/      /'

report
if [ "$failures" -gt 0 ]; then
    echo "FAIL: $failures check(s) failed"
    exit 1
fi
echo "PASS: docroute under systemd in a container"
