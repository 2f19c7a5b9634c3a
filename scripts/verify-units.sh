#!/usr/bin/env bash
# Checks the files in systemd/ the way systemd itself reads them, without root and
# without running systemd: the units load cleanly (systemd-analyze verify, which
# must print nothing at all), their sandboxing scores at most an exposure of 1.0
# for docroute.service and 2.0 for a docroute-handler@ instance
# (systemd-analyze security --offline), and the sysusers.d, tmpfiles.d and
# catalog files are accepted by their tools, all inside a throw-away root.
#
# usage: scripts/verify-units.sh [DOCROUTED [DOCROUTECTL]]
#   DOCROUTED, DOCROUTECTL  the binaries to put where ExecStart= names them
#                           (default: `swift build --show-bin-path`'s, else a stub)
# environment: SERVICE_THRESHOLD, HANDLER_THRESHOLD   highest exposure allowed, in
#              tenths (defaults 10 = 1.0 and 20 = 2.0)
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
units_dir="$repo/systemd"
units=(docroute.service docroute.socket docroute-handler@.service docroute-handler@.path)
# The services whose sandbox is scored, each with its highest exposure in tenths; the template
# is scored as one instance.
scored=("docroute.service:${SERVICE_THRESHOLD:-10}" "docroute-handler@example.service:${HANDLER_THRESHOLD:-20}")

if [ $# -gt 2 ] || [ "${1:-}" = -h ] || [ "${1:-}" = --help ]; then
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi

declare -a summary=()
failed=0
pass() { summary+=("PASS  $1"); }
fail() { summary+=("FAIL  $1"); failed=1; }
note() { echo "note: $*"; }

for tool in systemd-analyze systemd-sysusers systemd-tmpfiles journalctl; do
    if ! command -v "$tool" >/dev/null; then
        echo "error: $tool is not installed (Debian package: systemd)" >&2
        exit 2
    fi
done
version=$(systemd-analyze --version | awk 'NR == 1 { print $2 }')
# --offline and --threshold came with systemd 250, --root for verify with 251.
if ! systemd-analyze --help | grep -q -- '--offline='; then
    echo "error: systemd-analyze $version lacks 'security --offline'; systemd 251 or later is needed" >&2
    exit 2
fi
echo "systemd-analyze $version, units from $units_dir, exposure thresholds ${scored[*]} (tenths)"

root=$(mktemp -d "${TMPDIR:-/tmp}/docroute-verify.XXXXXX")
trap 'rm -rf "$root"' EXIT

# --- the throw-away root --------------------------------------------------------
# verify resolves units and every Exec*= binary inside --root, so the root needs
# systemd's own units (sysinit.target, sockets.target, …) and the binaries.
mkdir -p "$root/usr/bin" "$root/usr/lib/systemd/system" "$root/etc/systemd/system" \
    "$root/usr/lib/sysusers.d" "$root/usr/lib/tmpfiles.d" "$root/usr/lib/systemd/catalog"
ln -s usr/bin "$root/bin"
ln -s usr/bin "$root/sbin"
for host_units in /usr/lib/systemd/system /lib/systemd/system; do
    if [ -d "$host_units" ]; then
        cp -a "$host_units/." "$root/usr/lib/systemd/system/"
        break
    fi
done
for unit in "${units[@]}"; do
    cp "$units_dir/$unit" "$root/etc/systemd/system/$unit"
done
cp "$units_dir/docroute.sysusers" "$root/usr/lib/sysusers.d/docroute.conf"
cp "$units_dir/docroute.tmpfiles" "$root/usr/lib/tmpfiles.d/docroute.conf"
cp "$units_dir/docroute.catalog" "$root/usr/lib/systemd/catalog/docroute.catalog"

# Hard-link when possible: debug builds are large and only their presence matters
# (the link shares the original's mode, which was checked to be executable).
place() {
    ln -f "$1" "$2" 2>/dev/null || { cp "$1" "$2" && chmod a+x "$2"; }
}
stub() {
    printf '#!/bin/sh\n# stand-in for %s written by verify-units.sh\nexit 0\n' "$1" >"$2"
    chmod a+x "$2"
}

bin_dir=""
if [ $# -lt 2 ] && command -v swift >/dev/null; then
    bin_dir=$(cd "$repo" && swift build --show-bin-path 2>/dev/null) || bin_dir=""
fi
for index in 1 2; do
    name=$([ $index = 1 ] && echo docrouted || echo docroutectl)
    given=${!index:-}
    if [ -n "$given" ]; then
        if [ ! -f "$given" ] || [ ! -x "$given" ]; then
            echo "error: $given is not an executable file" >&2
            exit 2
        fi
        place "$given" "$root/usr/bin/$name"
        echo "binary: /usr/bin/$name <- $given"
    elif [ -n "$bin_dir" ] && [ -x "$bin_dir/$name" ]; then
        place "$bin_dir/$name" "$root/usr/bin/$name"
        echo "binary: /usr/bin/$name <- $bin_dir/$name (swift build --show-bin-path)"
    else
        stub "$name" "$root/usr/bin/$name"
        note "no $name binary given or built; a stub executable stands at /usr/bin/$name"
    fi
done

# Every other absolute command an Exec*= line names comes from this host.
while read -r command; do
    [ -e "$root$command" ] && continue
    if [ -x "$command" ]; then
        mkdir -p "$root$(dirname "$command")"
        cp -L "$command" "$root$command"
    else
        stub "$command" "$root$command"
        note "$command is not on this host; a stub stands in for it"
    fi
done < <(sed -n 's/^Exec[A-Za-z]*=[-@:+!]*\(\/[^ ]*\).*/\1/p' "${units[@]/#/$units_dir/}" | sort -u)

# --- 1. systemd-analyze verify: any output at all is a failure ------------------
verify_output=$(systemd-analyze verify --man=no --generators=no --root="$root" \
    "${units[@]}" docroute-handler@example.service docroute-handler@example.path 2>&1)
verify_status=$?
if [ $verify_status -eq 0 ] && [ -z "$verify_output" ]; then
    pass "systemd-analyze verify: ${units[*]} load without a message"
else
    echo "--- systemd-analyze verify (exit $verify_status):"
    echo "$verify_output"
    fail "systemd-analyze verify printed messages or failed (exit $verify_status)"
fi

# --- 2. systemd-analyze security --offline ---------------------------------------
declare -a scores=()
for entry in "${scored[@]}"; do
    unit=${entry%%:*}
    threshold=${entry##*:}
    security_output=$(systemd-analyze security --offline=true --threshold="$threshold" --no-pager \
        --root="$root" "$unit" 2>&1)
    security_status=$?
    score=$(echo "$security_output" | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' | tail -1)
    scores+=("$unit ${score:-?}")
    if [ $security_status -eq 0 ] && [ -n "$score" ]; then
        pass "systemd-analyze security $unit: exposure $score (threshold $((threshold / 10)).$((threshold % 10)))"
    else
        echo "--- systemd-analyze security $unit (exit $security_status), findings with an exposure:"
        echo "$security_output" | grep -v '^✓'
        fail "systemd-analyze security $unit: exposure ${score:-unknown} above $((threshold / 10)).$((threshold % 10)) or failed"
    fi
done

# --- 3. sysusers.d: creates the users in the root's /etc ------------------------
sysusers_output=$(systemd-sysusers --root="$root" 2>&1)
sysusers_status=$?
unexpected=$(echo "$sysusers_output" | grep -v -E '^Creating (user|group) ' | grep -v '^$')
if [ $sysusers_status -eq 0 ] && [ -z "$unexpected" ] && grep -q '^docroute:' "$root/etc/passwd"; then
    pass "systemd-sysusers: docroute.sysusers creates user docroute"
else
    echo "--- systemd-sysusers (exit $sysusers_status):"
    echo "$sysusers_output"
    fail "systemd-sysusers rejected docroute.sysusers"
fi

# --- 4. tmpfiles.d: creates the spool and state folders in the root -------------
tmpfiles_output=$(systemd-tmpfiles --root="$root" --create 2>&1)
tmpfiles_status=$?
if [ "$(id -u)" != 0 ]; then
    # Handing folders to docroute needs root; everything else must still work.
    unexpected=$(echo "$tmpfiles_output" | grep -v -E '^fchownat\(\) of .* failed: Operation not permitted$' | grep -v '^$')
    [ -z "$unexpected" ] && tmpfiles_status=0
    ownership="(ownership not applied: not root)"
else
    unexpected=$tmpfiles_output
    ownership=""
fi
missing=""
for folder in var/spool/docroute/drop var/spool/docroute/mail var/spool/docroute/quarantine var/lib/docroute/containers; do
    [ -d "$root/$folder" ] || missing="$missing /$folder"
done
if [ $tmpfiles_status -eq 0 ] && [ -z "$unexpected" ] && [ -z "$missing" ]; then
    pass "systemd-tmpfiles: docroute.tmpfiles creates the spool and containers $ownership"
else
    echo "--- systemd-tmpfiles (exit $tmpfiles_status):"
    echo "$tmpfiles_output"
    [ -n "$missing" ] && echo "not created:$missing"
    fail "systemd-tmpfiles rejected docroute.tmpfiles"
fi

# --- 5. catalog: parses, and holds every MESSAGE_ID the Swift code logs ---------
catalog_output=$(journalctl --root="$root" --update-catalog 2>&1)
catalog_status=$?
listed=$(journalctl --root="$root" --list-catalog 2>/dev/null)
code_ids=$(grep -o -h -E '"[0-9a-f]{32}"' "$repo"/Sources/DocRouteSystemd/*.swift | tr -d '"' | sort -u)
absent=""
for id in $code_ids; do
    echo "$listed" | grep -q "^$id " || absent="$absent $id"
done
if [ $catalog_status -eq 0 ] && [ -z "$catalog_output" ] && [ -n "$code_ids" ] && [ -z "$absent" ]; then
    pass "journalctl --update-catalog: docroute.catalog explains all $(echo "$code_ids" | wc -w) MESSAGE_IDs"
else
    echo "--- journalctl --update-catalog (exit $catalog_status):"
    echo "$catalog_output"
    [ -n "$absent" ] && echo "MESSAGE_IDs in the code but not in the catalog:$absent"
    [ -z "$code_ids" ] && echo "no MESSAGE_IDs found in Sources/DocRouteSystemd"
    fail "docroute.catalog"
fi

# --- summary ----------------------------------------------------------------------
echo
echo "== verify-units summary (systemd $version, running as $(id -un))"
printf '%s\n' "${summary[@]}"
for entry in "${scores[@]}"; do
    echo "exposure: $entry"
done
if [ $failed -ne 0 ]; then
    echo "verify-units: FAILED"
    exit 1
fi
echo "verify-units: all checks passed"
