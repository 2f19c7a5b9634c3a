#!/usr/bin/env bash
# Writes ROOT/docroute.toml: the shipped configuration with every path moved under ROOT,
# and installs the sample handlers, so `make run` needs no root-owned folders. An existing
# ROOT/docroute.toml is the user's: it is kept (remove it to get the shipped one again).
# Then prints the handlers (with BIN_DIR's docroutectl), where to drop files, and last the
# lines to paste into a second terminal: `make run` starts docrouted right after them.
#
# With FLEET_DATABASE (a postgresql:// URL) a new configuration gets a [fleet] table: host name
# FLEET_HOST (default: the machine's name), password from FLEET_PASSWORD_FILE when set. Two
# roots (RUN_ROOT=…) with two host names make a fleet of two on one machine (README, "Running a
# fleet").
set -euo pipefail
root=${1:?usage: make-run-config.sh ROOT}
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$root/etc/handlers.d" "$root/var/lib/docroute" "$root/spool/drop" "$root/spool/mail" "$root/run"
for plist in "$here"/config/handlers/*.plist; do
  # A sample the user edited stays as they left it.
  [ -e "$root/etc/handlers.d/$(basename "$plist")" ] || cp "$plist" "$root/etc/handlers.d/"
done
if [ -e "$root/docroute.toml" ]; then
  echo "configuration: $root/docroute.toml (kept as it is; remove it to get the shipped one again)"
else
  sed -e "s#\"/run/docroute/#\"$root/run/#" \
      -e "s#\"/var/lib/docroute#\"$root/var/lib/docroute#" \
      -e "s#\"/etc/docroute/handlers.d#\"$root/etc/handlers.d#" \
      -e "s#\"/var/spool/docroute/drop#\"$root/spool/drop#" \
      -e "s#\"/var/spool/docroute/mail#\"$root/spool/mail#" \
      -e "s#\"/var/spool/docroute/quarantine#\"$root/spool/quarantine#" \
      -e "/^launch_flag_directory/d" \
      "$here/config/docroute.toml" > "$root/docroute.toml"
  if [ -n "${FLEET_DATABASE:-}" ]; then
    {
      echo
      echo "[fleet]"
      echo "database = \"$FLEET_DATABASE\""
      [ -z "${FLEET_HOST:-}" ] || echo "host_name = \"$FLEET_HOST\""
      [ -z "${FLEET_PASSWORD_FILE:-}" ] || echo "password_file = \"$FLEET_PASSWORD_FILE\""
    } >> "$root/docroute.toml"
  fi
  echo "configuration: $root/docroute.toml (written from config/docroute.toml${FLEET_DATABASE:+, with [fleet]})"
fi
if [ -n "${FLEET_DATABASE:-}" ] && ! grep -q '^\[fleet\]' "$root/docroute.toml"; then
  echo "warning: FLEET_DATABASE is set but the kept $root/docroute.toml has no [fleet] table; remove it to have one written" >&2
fi
bin=$(cd "${BIN_DIR:-$here/.build/debug}" 2>/dev/null && pwd || echo "$here/.build/debug")
if [ -x "$bin/docroutectl" ]; then
  echo "handlers:"
  "$bin/docroutectl" handlers --config "$root/docroute.toml" | sed 's/^/  /' || true
fi
echo "drop files into: $root/spool/drop   (or $root/spool/drop/<mailbox>/)"
echo "mail (Maildir) into: $root/spool/mail/new   (or $root/spool/mail/.<Folder>/new)"
echo "sandboxes under: $root/var/lib/docroute/containers"
echo "starting docrouted in the foreground (Ctrl-C stops it); socket $root/run/docroute.sock"
# Last, so the handler list above does not scroll them away before they are copied.
echo
echo "in a second terminal, so docroutectl finds this daemon's configuration and socket:"
echo "  export DOCROUTE_CONFIG=$root/docroute.toml"
echo "  export PATH=\"$bin:\$PATH\""
echo
