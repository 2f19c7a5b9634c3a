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
# Installed inside the booted container, from its apt cache (see the root file system below).
offline=postfix
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
# Root file system: debootstrap once, then a cached tarball keyed on what it holds. The packages
# the test installs inside the booted container (which has no network: --private-network) are
# downloaded into its apt cache here, with the package lists, so that apt-get works offline there.
key=$(printf '%s\n' "$suite" minbase "$include" "offline=$offline" | sha256sum | cut -c1-16)
tarball="$cache/rootfs-$suite-minbase-$key.tar"
if [ ! -s "$tarball" ]; then
    say "debootstrap $suite ($include; cached: $offline) — once, then cached as $tarball"
    fresh="$work/debootstrap"
    if ! debootstrap --variant=minbase --include="$include" "$suite" "$fresh" "$mirror" >"$work/debootstrap.log" 2>&1; then
        tail -5 "$work/debootstrap.log" >&2
        unmount_under "$fresh"
        skip "debootstrap of $suite from $mirror failed (no network to the mirror?); log above"
    fi
    # debootstrap can leave /proc mounted in the new root.
    unmount_under "$fresh"
    cp -L /etc/resolv.conf "$fresh/etc/resolv.conf" 2>/dev/null || true
    if ! chroot "$fresh" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >>"$work/debootstrap.log" 2>&1 ||
        ! chroot "$fresh" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --download-only --no-install-recommends $offline >>"$work/debootstrap.log" 2>&1; then
        tail -5 "$work/debootstrap.log" >&2
        unmount_under "$fresh"
        skip "downloading $offline into the container's apt cache failed (no network to the mirror?); log above"
    fi
    unmount_under "$fresh"
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
# Release binaries, static Swift runtime (the container has no Swift), packaged the Debian way.
if [ -n "${DOCROUTE_BINDIR:-}" ]; then
    bin_dir=$DOCROUTE_BINDIR
else
    say "release build: scripts/release-build.sh (scratch: ${DOCROUTE_SCRATCH_PATH:-.build})"
    if ! bin_dir=$("$repo/scripts/release-build.sh" "$work/build.log"); then
        tail -30 "$work/build.log" >&2
        abort "the release build (log above)"
    fi
fi
timed "release build"

# The package, as `make deb` builds it (dpkg-buildpackage, debhelper, lintian), from the build
# above; and the same sources rebuilt under a higher version, for the upgrade. gzip instead of
# make deb's xz (the same files; xz of 150 MB costs minutes on two cores), and kept under
# $cache/debs-<key> so that a run with the same binaries and packaging reuses both.
deb_key=$({
    stat -c '%n %s %Y' "$bin_dir/docrouted" "$bin_dir/docroutectl" "$bin_dir/generate-manual" || true
    cd "$repo" && find debian scripts/install.sh scripts/build-deb.sh systemd config/docroute.toml README.md docs -type f -print0 |
        sort -z | xargs -0 cat
} | sha256sum | cut -c1-16)
deb_cache="$cache/debs-$deb_key"
if [ ! -f "$deb_cache/done" ]; then
    rm -rf "$cache"/debs-*
    if ! DOCROUTE_BINDIR="$bin_dir" DPKG_DEB_COMPRESSOR_TYPE=gzip DPKG_DEB_COMPRESSOR_LEVEL=1 \
        "$repo/scripts/build-deb.sh" "$deb_cache" >"$deb_cache.log" 2>&1; then
        tail -40 "$deb_cache.log" >&2
        abort "scripts/build-deb.sh built the package and lintian passed it (log above)"
    fi
    if ! DOCROUTE_BINDIR="$bin_dir" DOCROUTE_DEB_REVISION=+rebuild1 DOCROUTE_LINTIAN=0 DPKG_DEB_COMPRESSOR_TYPE=gzip DPKG_DEB_COMPRESSOR_LEVEL=1 \
        "$repo/scripts/build-deb.sh" "$deb_cache/next" >"$deb_cache-next.log" 2>&1; then
        tail -40 "$deb_cache-next.log" >&2
        abort "the rebuilt package for the upgrade (log above)"
    fi
    mv "$deb_cache.log" "$deb_cache/build.log"
    rm -f "$deb_cache-next.log"
    touch "$deb_cache/done"
    built="built"
else
    built="reused (same binaries and packaging)"
fi
deb=$(cd "$deb_cache" && ls docroute_*.deb)
next_deb=$(cd "$deb_cache/next" && ls docroute_*.deb)
pass "$built $deb ($(du -h "$deb_cache/$deb" | cut -f1)) with dpkg-buildpackage; lintian: no errors, no warnings ($(grep -c '^O: ' "$deb_cache/build.log" || true) overridden), $(grep -c '^I: ' "$deb_cache/build.log" || true) notes"
timed "package build and lintian"

# Into the container's tree before boot: the two packages, the test's helpers, and the users of
# its test handlers (sysusers.d creates them at boot).
install -d -m 0755 "$root/root/next" "$root/usr/local/lib/docroute-test"
install -m 0644 "$deb_cache/$deb" "$root/root/$deb"
install -m 0644 "$deb_cache/next/$next_deb" "$root/root/next/$next_deb"
install -m 0755 "$helpers/launched-handler.py" "$helpers/send-mail.py" "$root/usr/local/lib/docroute-test/"
install -D -m 0644 "$helpers/test-viewer.sysusers" "$root/etc/sysusers.d/docroute-test-viewer.conf"
timed "copy into the container"

# ---------------------------------------------------------------------------
# Boot.
say "booting $machine"
# --private-network: the container needs none, and with its own network namespace
# systemd in it may set up PrivateNetwork= for the service.
systemd-nspawn --boot --volatile=overlay --register=no --keep-unit --private-network \
    --console=read-only -D "$root" --machine="$machine" </dev/null >"$console" 2>&1 &
nspawn_pid=$!

# The container's init is the child of nspawn that lives in another pid namespace and whose root
# holds /run/systemd/system (systemd is up). Looked for again at each tick, not kept from the first
# look: one run's wait ran out after the container had booted to its login prompt, which fits a
# first pid that never became init.
# `find_leader any` drops the second condition: at an abort, cleanup still gets a pid to power off.
host_pidns=$(readlink /proc/self/ns/pid)
find_leader() {
    local stat pid fields booted=${1:-booted}
    for stat in /proc/[0-9]*/stat; do
        read -r -a fields <"$stat" 2>/dev/null || continue
        # Field 4 is the parent; the command name (field 2) has no spaces here.
        [ "${fields[3]:-}" = "$nspawn_pid" ] || continue
        pid=${fields[0]}
        if [ "$(readlink "/proc/$pid/ns/pid" 2>/dev/null)" != "$host_pidns" ] \
            && { [ "$booted" = any ] || [ -d "/proc/$pid/root/run/systemd/system" ]; }; then
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
    leader=$(find_leader || true)
    [ -n "$leader" ] && break
    if ! kill -0 "$nspawn_pid" 2>/dev/null; then
        tail -20 "$console" >&2
        abort "systemd-nspawn started the container (console above)"
    fi
    sleep 0.1
done
if [ -z "$leader" ]; then
    leader=$(find_leader any || true)
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
# The package, installed as an admin would: apt-get install ./docroute_*.deb (offline: its
# dependencies are in the root file system already).
if in_container sh -c 'cd /root && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ./docroute_*.deb' >"$work/apt-install.log" 2>&1; then
    pass "apt-get install ./$deb ($(in_container dpkg-query -W -f='${Version}' docroute))"
else
    tail -30 "$work/apt-install.log" >&2
    abort "apt-get install ./$deb (log above)"
fi
missing_libraries=$(in_container ldd /usr/bin/docrouted /usr/bin/docroutectl 2>&1 | grep 'not found' || true)
if [ -n "$missing_libraries" ]; then
    abort "binaries run in the container (missing: $(echo "$missing_libraries" | awk '{print $1}' | sort -u | tr '\n' ' '))"
fi
pass "static release binaries need only the container's libraries ($(in_container ldd /usr/bin/docrouted | awk '{print $1}' | tr '\n' ' '))"
absent=""
for file in /usr/bin/docrouted /usr/bin/docroutectl /lib/systemd/system/docroute.service /lib/systemd/system/docroute.socket \
    /lib/systemd/system/docroute-handler@.service /lib/systemd/system/docroute-handler@.path /usr/lib/sysusers.d/docroute.conf \
    /usr/lib/tmpfiles.d/docroute.conf /usr/lib/systemd/catalog/docroute.catalog /etc/docroute/docroute.toml \
    /usr/share/man/man8/docrouted.8.gz /usr/share/man/man5/docroute.toml.5.gz /usr/share/man/man1/docroutectl.1.gz /usr/share/bash-completion/completions/docroutectl \
    /usr/share/zsh/site-functions/_docroutectl /usr/share/fish/vendor_completions.d/docroutectl.fish /usr/share/doc/docroute/README.md \
    /usr/share/doc/docroute/copyright; do
    [ -e "$ctr$file" ] || absent="$absent $file"
done
conffiles=$(in_container dpkg-query -W -f='${Conffiles}' docroute | awk 'NF {print $1}' | tr '\n' ' ')
if [ -z "$absent" ] && [ "$conffiles" = "/etc/docroute/docroute.toml " ]; then
    pass "the package holds binaries, units, sysusers.d, tmpfiles.d, catalog, man pages, completions, README; conffiles: $conffiles"
else
    fail "the package's files (missing:${absent:- none}; conffiles: ${conffiles:-none})"
fi
socket_state="$(in_container systemctl is-enabled docroute.socket || true)/$(in_container systemctl is-active docroute.socket || true)"
service_state="$(in_container systemctl is-enabled docroute.service || true)/$(in_container systemctl is-active docroute.service || true)"
if [ "$socket_state" = enabled/active ] && [ "$service_state" = enabled/active ]; then
    pass "the maintainer scripts enabled and started docroute.socket and docroute.service"
else
    fail "docroute.socket and docroute.service enabled and active after install (socket $socket_state, service $service_state)"
fi
if in_container getent passwd docroute >/dev/null && in_container id -nG docroute | grep -qw docroute-drop; then
    pass "the maintainer scripts created user docroute (sysusers.d; groups: $(in_container id -nG docroute))"
else
    fail "the maintainer scripts created user docroute in group docroute-drop"
fi
drop_mode=$(in_container stat -c '%a %U:%G' /var/spool/docroute/drop 2>/dev/null || echo missing)
quarantine_mode=$(in_container stat -c '%a %U:%G' /var/spool/docroute/quarantine 2>/dev/null || echo missing)
if [ "$drop_mode" = "2770 docroute:docroute-drop" ] && [ "$quarantine_mode" = "750 docroute:docroute" ]; then
    pass "tmpfiles.d created /var/spool/docroute/drop ($drop_mode) and quarantine ($quarantine_mode)"
else
    fail "tmpfiles.d created /var/spool/docroute/drop 2770 docroute:docroute-drop (found: $drop_mode) and quarantine 750 (found: $quarantine_mode)"
fi
# The admin's part: handler manifests.
install -m 0644 "$repo"/config/handlers/*.plist "$helpers/test-viewer.plist" "$helpers/test-launched.plist" "$ctr/etc/docroute/handlers.d/"
timed "package install"

# Socket activation: with the service stopped, a connection starts it.
in_container systemctl stop docroute.service
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
    abort "socket activation ($welcome): $(in_container systemctl status docroute.service --no-pager -n 20 2>&1) $(in_container systemctl status docroute.socket --no-pager -n 20 2>&1) $(in_container ls -la /run/docroute 2>&1)"
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
# group (the docroute group is the admin group, which may hold the mail agent). Nothing for others.
owner=$(in_container stat -c '%U:%G %a' "${sandbox#"$ctr"}/1abc.pdb" 2>/dev/null || echo missing)
if [ "${owner%% *}" = root:root ] && [ "${owner: -1}" = 0 ]; then
    pass "the copy belongs to the handler's user and group ($owner)"
else
    fail "the copy belongs to the handler's user and group: root:root, nothing for others (found $owner)"
fi

# A file nobody claims goes to the quarantine folder the shipped configuration and the tmpfiles.d
# file agree on, with its reason beside it.
printf '\x00\x01\x02 nobody claims this\n' >"$work/unclaimed.bin"
cp "$work/unclaimed.bin" "$ctr/var/spool/docroute/drop/.incoming-unclaimed.bin"
mv "$ctr/var/spool/docroute/drop/.incoming-unclaimed.bin" "$ctr/var/spool/docroute/drop/unclaimed.bin"
quarantined="$ctr/var/spool/docroute/quarantine/Inbox/unclaimed.bin"
if wait_for_file "$quarantined" 60 && cmp -s "$work/unclaimed.bin" "$quarantined" && [ -n "$(ls "$ctr/var/spool/docroute/quarantine/Inbox/" | grep -m1 reason)" ]; then
    pass "unclaimed.bin was quarantined in /var/spool/docroute/quarantine/Inbox/ with its reason ($(ls "$ctr/var/spool/docroute/quarantine/Inbox/" | tr '\n' ' '))"
else
    fail "unclaimed.bin quarantined in /var/spool/docroute/quarantine/Inbox/ (found: $(find "$ctr/var/spool/docroute/quarantine" "$ctr/var/lib/docroute" -name 'unclaimed*' 2>/dev/null | sed "s|^$ctr||" | tr '\n' ' '))"
fi
if client subscribe "$sock" "$molecules" --expect 1abc.pdb --ack --timeout 60 --linger 1 >"$work/subscribe1.log" 2>&1; then
    first=$(grep -m1 '1abc.pdb' "$work/subscribe1.log")
    pass "subscribed as $molecules: $(echo "$first" | cut -c1-150)…"
else
    fail "subscribed as $molecules and got 1abc.pdb: $(cat "$work/subscribe1.log")"
fi
delivery_id=$(sed -n 's/.*"deliveryID":"\([^"]*\)".*/\1/p' "$work/subscribe1.log" | head -1)

in_container journalctl -u docroute.service -o json --no-pager >"$work/journal.json" 2>&1 || true
if journal_report=$(client journal "$molecules" "$delivery_id" - <"$work/journal.json" 2>&1); then
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
# --- docroutectl open as an ordinary user (open by descriptor; keep this block when rewriting) ---
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
# Launch on demand through systemd: nothing is subscribed as org.docroute.test.launched when its
# document arrives; docrouted writes /run/docroute/launch/docroute-launched, the path unit starts
# docroute-handler@docroute-launched.service as that user, and the handler subscribes.
launched=org.docroute.test.launched
launched_unit=docroute-handler@docroute-launched
if in_container sh -c "docroutectl handlers --unit $launched > /root/launched-unit.sh && sh /root/launched-unit.sh" >"$work/unit-setup.log" 2>&1 &&
    [ "$(in_container systemctl is-active "$launched_unit.path")" = active ]; then
    pass "docroutectl handlers --unit $launched | sh: $(grep -c . "$ctr/root/launched-unit.sh") lines, $launched_unit.path active, service $(in_container systemctl is-active "$launched_unit.service" || true)"
    sed 's/^/      /' "$ctr/root/launched-unit.sh"
else
    fail "docroutectl handlers --unit $launched | sh: $(tr '\n' ' ' <"$work/unit-setup.log")"
fi
drop_file trigger.launchdoc
report="$ctr/var/lib/docroute/containers/$launched/Documents/report.json"
if wait_for_file "$report" 90; then
    launched_uid=$(in_container id -u docroute-launched)
    if verdict=$(python3 - "$report" "$work/trigger.launchdoc" "$launched_uid" "$launched" <<'PYTHON'
import json, sys
report = json.load(open(sys.argv[1]))
expected = open(sys.argv[2], "rb").read().hex()
uid, bundle = int(sys.argv[3]), sys.argv[4]
problems = []
launch = report["messages"][-1]
url = launch.get("launchOptions", {}).get("UIApplicationLaunchOptionsURLKey", "")
if launch.get("type") != "launch" or not url.endswith("/trigger.launchdoc"):
    problems.append(f"launch event: {launch}")
if report["document"] != expected:
    problems.append("the document's bytes differ")
if report["uid"] != uid:
    problems.append(f"uid {report['uid']}, not {uid}")
status = dict(line.split(":", 1) for line in report["status"])
for key in ("CapInh", "CapPrm", "CapEff", "CapAmb"):
    if status[key].strip() != "0000000000000000":
        problems.append(f"{key} {status[key].strip()}")
if report["containersVisible"] != [bundle]:
    problems.append(f"sees containers {report['containersVisible']}")
if not report["otherContainer"].startswith(("FileNotFoundError", "PermissionError")):
    problems.append(f"another handler's container: {report['otherContainer']}")
if problems:
    print("; ".join(problems))
    sys.exit(1)
print(f"launch {url}, uid {report['uid']}, Cap{{Inh,Prm,Eff,Amb}} 0, sees only {report['containersVisible']}, "
      f"another handler's copy: {report['otherContainer']}")
PYTHON
    ); then
        pass "systemd launched $launched_unit.service on demand, the handler subscribed and got its launch: $verdict"
    else
        fail "the launched handler's report: $verdict"
    fi
    handler_pid=$(in_container systemctl show -P MainPID "$launched_unit.service")
    handler_status=$(in_container grep -E '^(Uid|CapPrm|CapEff|CapAmb):' "/proc/$handler_pid/status" | tr -s '\t' ' ' | tr '\n' ' ')
    if [ "$handler_pid" != 0 ] && echo "$handler_status" | grep -q "^Uid: $launched_uid $launched_uid" &&
        echo "$handler_status" | grep -q "CapPrm: 0000000000000000 CapEff: 0000000000000000 CapAmb: 0000000000000000"; then
        pass "/proc/$handler_pid/status of the running handler: $handler_status"
    else
        fail "/proc/<pid>/status of the running handler (pid $handler_pid): $handler_status"
    fi
else
    fail "$launched_unit.service was started on demand and the handler reported (flag: $(ls "$ctr/run/docroute/launch" 2>&1 | tr '\n' ' '); $(in_container systemctl status "$launched_unit.path" "$launched_unit.service" --no-pager -n 10 2>&1 | tail -15 | tr '\n' ' '))"
fi
launched_entry=$(in_container journalctl -u docroute.service --no-pager -o cat MESSAGE_ID=be4388ca850546659d3b6865e29c6598 "DOCROUTE_BUNDLE_ID=$launched" | head -1)
if [ -n "$launched_entry" ]; then
    pass "journal: MESSAGE_ID=be4388ca… DOCROUTE_BUNDLE_ID=$launched: \"$launched_entry\""
else
    fail "journal holds the handler-launched entry (MESSAGE_ID=be4388ca…) for $launched"
fi
# The sandboxing score under the real systemd, the instance with its drop-in.
service_exposure=$(in_container systemd-analyze security --no-pager docroute.service 2>/dev/null | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
handler_exposure=$(in_container systemd-analyze security --no-pager "$launched_unit.service" 2>/dev/null | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
if awk -v s="${service_exposure:-99}" -v h="${handler_exposure:-99}" 'BEGIN { exit !(s <= 1.0 && h <= 2.0) }'; then
    pass "systemd-analyze security: docroute.service ${service_exposure}, $launched_unit.service ${handler_exposure} (at most 1.0 and 2.0)"
else
    fail "systemd-analyze security: docroute.service ${service_exposure:-?} (at most 1.0), $launched_unit.service ${handler_exposure:-?} (at most 2.0)"
fi
timed "launch by systemd"

# ---------------------------------------------------------------------------
# A real mail server: Postfix from Debian, "Local only", set up with the README's lines exactly
# (the block after the "postfix-lines" marker); a mail sent over SMTP to port 25 with one
# attachment Molecules claims and one nobody claims.
awk '/<!-- postfix-lines/ { found = 1; next } found && /^```sh$/ { inside = 1; next } inside && /^```$/ { exit } inside { print }' \
    "$repo/README.md" >"$ctr/root/postfix-setup.sh"
if [ ! -s "$ctr/root/postfix-setup.sh" ]; then
    fail "the README's Postfix lines (no block after <!-- postfix-lines -->)"
elif in_container bash -e /root/postfix-setup.sh >"$work/postfix.log" 2>&1 &&
    [ "$(in_container systemctl is-active postfix@-.service)" = active ]; then
    pass "Postfix $(in_container dpkg-query -W -f='${Version}' postfix) installed and set up with the README's $(grep -c . "$ctr/root/postfix-setup.sh") lines ($(in_container postconf -h inet_interfaces) only; $(in_container postconf -h virtual_mailbox_maps))"
else
    tail -20 "$work/postfix.log" >&2
    fail "Postfix installed with the README's lines (log above)"
fi
install -d "$ctr/root/mail"
cp "$work/1abc.pdb" "$ctr/root/mail/molecule.pdb"
printf '\x00\x01\x02\x03 binary that no handler claims\n' >"$ctr/root/mail/nobody.bin"
message_id="<container-smtp-1@example.org>"
if in_container python3 /usr/local/lib/docroute-test/send-mail.py 127.0.0.1 25 sender@example.org documents@docroute.localdomain \
    /root/mail/molecule.pdb /root/mail/nobody.bin "$message_id" >"$work/smtp.log" 2>&1; then
    pass "SMTP to 127.0.0.1:25: $(cat "$work/smtp.log")"
else
    fail "SMTP to 127.0.0.1:25: $(cat "$work/smtp.log")"
fi
maildir="$ctr/var/spool/docroute/mail"
mail_copy="$ctr/var/lib/docroute/containers/$molecules/Documents/Inbox/INBOX/molecule.pdb"
read_message() { ls "$maildir/cur" 2>/dev/null | grep -m1 ':2,S$'; }
for _ in $(seq 900); do [ -n "$(read_message)" ] && break; sleep 0.1; done
if wait_for_file "$mail_copy" 30 && cmp -s "$work/1abc.pdb" "$mail_copy" && [ -n "$(read_message)" ] && [ -z "$(ls "$maildir/new")" ]; then
    pass "Postfix's virtual(8) put the mail in the Maildir; molecule.pdb reached Documents/Inbox/INBOX/ byte for byte; the message is in cur/ as $(read_message)"
else
    fail "mail delivered by Postfix: copy $(ls "$(dirname "$mail_copy")" 2>&1 | tr '\n' ' '); new/: $(ls "$maildir/new" 2>&1 | tr '\n' ' '); cur/: $(ls "$maildir/cur" 2>&1 | tr '\n' ' '); $(in_container journalctl -u postfix@-.service --no-pager -o cat -n 5 | tr '\n' ' ')"
fi
# An attachment nobody claims is recorded in the quarantine as a part of its message (an entry
# naming the message and part; its bytes stay in the message) and copied nowhere.
stray=$(find "$ctr/var/lib/docroute/containers" "$ctr/var/spool/docroute/quarantine" -name 'nobody*' 2>/dev/null | sed "s|^$ctr||")
entry=$(grep -l '"nobody.bin"' "$ctr"/var/spool/docroute/quarantine/INBOX/*.mailpart 2>/dev/null | head -1 | sed "s|^$ctr||")
quarantined=$(in_container journalctl -u docroute.service --no-pager -o cat | grep -m1 'attachment quarantined' || true)
listed=$(in_container docroutectl quarantine list 2>&1 | grep -m1 'nobody.bin' || true)
if [ -z "$stray" ] && [ -n "$entry" ] && [ -n "$quarantined" ] && [ -n "$listed" ]; then
    pass "nobody.bin, claimed by no handler, is in no sandbox; recorded as $entry (\"$(echo "$quarantined" | cut -c1-100)\"), and quarantine list shows it"
else
    fail "nobody.bin recorded in the quarantine (entry: ${entry:-none}; log: ${quarantined:-none}; list: ${listed:-none}; copies: ${stray:-none})"
fi
if client subscribe "$sock" "$molecules" --expect molecule.pdb --ack --timeout 60 --linger 1 >"$work/subscribe-mail.log" 2>&1 &&
    annotation=$(python3 - "$work/subscribe-mail.log" "$message_id" <<'PYTHON'
import json, sys
for line in open(sys.argv[1]):
    message = json.loads(line)
    url = message.get("url") or message.get("launchOptions", {}).get("UIApplicationLaunchOptionsURLKey", "")
    if not url.endswith("/INBOX/molecule.pdb"):
        continue
    annotation = message.get("annotation") or message.get("launchOptions", {}).get("UIApplicationLaunchOptionsAnnotationKey", {})
    source = message.get("sourceApplication") or message.get("launchOptions", {}).get("UIApplicationLaunchOptionsSourceApplicationKey")
    wanted = {"from": "sender@example.org", "subject": "Two attachments", "messageID": sys.argv[2], "originalFilename": "molecule.pdb"}
    wrong = {key: annotation.get(key) for key, value in wanted.items() if value not in str(annotation.get(key, ""))}
    if wrong or "partPath" not in annotation or source != "com.apple.mobilemail":
        print(f"annotation {annotation}, source {source}: wrong {wrong}")
        sys.exit(1)
    print(json.dumps(annotation, sort_keys=True))
    sys.exit(0)
print("no event for INBOX/molecule.pdb")
sys.exit(1)
PYTHON
    ); then
    pass "Molecules was told of the attachment with the mail's annotation: $annotation"
else
    fail "the event for INBOX/molecule.pdb and its annotation: ${annotation:-} $(tail -3 "$work/subscribe-mail.log")"
fi
timed "Postfix"

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

# ---------------------------------------------------------------------------
# Upgrade to the rebuilt package with documents pending: two delivered and not acknowledged, one
# dropped while the upgrade runs. Nothing lost, nothing delivered twice, the ledger and the
# containers kept.
in_container systemctl disable --now "$launched_unit.path" "$launched_unit.service" >/dev/null 2>&1 || true
drop_file up1.pdb
drop_file up2.pdb
if ! wait_for_file "$sandbox/up1.pdb" 60 || ! wait_for_file "$sandbox/up2.pdb" 60; then
    fail "up1.pdb and up2.pdb delivered before the upgrade"
fi
upgrade_pid=$(in_container systemctl show -P MainPID docroute.service)
ledger_before=$(in_container sh -c 'ls /var/lib/docroute/*.sqlite* /var/lib/docroute/*.db 2>/dev/null | head -1')
in_container sh -c 'cd /root/next && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ./docroute_*.deb' >"$work/apt-upgrade.log" 2>&1 &
upgrade_job=$!
drop_file up3.pdb
if wait "$upgrade_job"; then
    pass "apt-get install ./$next_deb upgraded $(grep -o 'Preparing to unpack.*' "$work/apt-upgrade.log" | head -1 | sed 's/.*(\(.*\)).*/\1/' || true) -> $(in_container dpkg-query -W -f='${Version}' docroute); daemon pid $upgrade_pid -> $(in_container systemctl show -P MainPID docroute.service)"
else
    tail -20 "$work/apt-upgrade.log" >&2
    fail "apt-get install ./$next_deb (log above)"
fi
if client subscribe "$sock" "$molecules" --expect up1.pdb --expect up2.pdb --expect up3.pdb --ack --timeout 90 --linger 2 >"$work/subscribe-upgrade.log" 2>&1; then
    counts=$(for name in up1.pdb up2.pdb up3.pdb 1abc.pdb 2abc.pdb; do printf '%s:%s ' "$name" "$(grep -c "/$name\"" "$work/subscribe-upgrade.log")"; done)
    copies=$(ls "$sandbox" | grep -c '^up[0-9]' || true)
    if [ "$counts" = "up1.pdb:1 up2.pdb:1 up3.pdb:1 1abc.pdb:0 2abc.pdb:0 " ] && [ "$copies" = 3 ] &&
        [ -n "$ledger_before" ] && in_container test -s "$ledger_before" && [ -e "$report" ] && [ -e "$ctr$viewer_copy" ]; then
        pass "after the upgrade each pending document came once ($counts), $copies copies in the sandbox, ledger $ledger_before and the containers kept"
    else
        fail "nothing lost, nothing twice across the upgrade (events: $counts; copies: $(ls "$sandbox" | tr '\n' ' '); ledger: ${ledger_before:-none})"
    fi
else
    fail "the pending documents after the upgrade: $(tail -5 "$work/subscribe-upgrade.log")"
fi
timed "upgrade"

in_container journalctl -u docroute.service -u docroute.socket --no-pager -o short-monotonic >"$work/journal.txt" 2>&1 || true

# ---------------------------------------------------------------------------
# Purge removes what installing and running made; the system users stay, as Debian's do.
if in_container env DEBIAN_FRONTEND=noninteractive apt-get purge -y docroute >"$work/apt-purge.log" 2>&1; then
    left=""
    for path in /var/lib/docroute /var/spool/docroute /etc/docroute /run/docroute /usr/bin/docrouted /lib/systemd/system/docroute.socket \
        /usr/lib/sysusers.d/docroute.conf /usr/lib/tmpfiles.d/docroute.conf /etc/systemd/system/sockets.target.wants/docroute.socket; do
        [ -e "$ctr$path" ] || [ -L "$ctr$path" ] && left="$left $path"
    done
    units=$(in_container systemctl list-units --all --plain --no-legend 'docroute*' | awk '$3 != "inactive" || $4 != "dead" {print $1}' | tr '\n' ' ')
    status=$(in_container dpkg-query -W -f='${db:Status-Status}' docroute 2>/dev/null || echo absent)
    if [ -z "$left" ] && [ -z "$units" ] && { [ "$status" = not-installed ] || [ "$status" = absent ]; }; then
        pass "apt-get purge docroute: package $status, no files, folders or active units left (user docroute kept: $(in_container getent passwd docroute | cut -d: -f1,3))"
    else
        fail "apt-get purge docroute (left:${left:- nothing}; units: ${units:-none}; status: $status)"
    fi
else
    tail -20 "$work/apt-purge.log" >&2
    fail "apt-get purge docroute (log above)"
fi
timed "purge"

say "journal of docroute.service (last 25 lines)"
tail -25 "$work/journal.txt" | sed 's/^/      /'

report
if [ "$failures" -gt 0 ]; then
    echo "FAIL: $failures check(s) failed"
    exit 1
fi
echo "PASS: docroute under systemd in a container"
