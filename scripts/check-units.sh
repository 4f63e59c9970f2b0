#!/usr/bin/env bash
# Checks the shipped systemd units: `systemd-analyze verify` must print nothing at all (it exits
# 0 on many mistakes, so any output is a failure), and `systemd-analyze security` must rate the
# service's exposure at 2.0 or lower.
#
# The shipped reachd.service starts /usr/local/bin/reachd, which need not exist on the build
# machine (verify would complain), so verify runs on a copy whose ExecStart= is the built binary
# (or /bin/true before the first build). Everything else is checked as shipped.
set -euo pipefail
cd "$(dirname "$0")/.."

MAX_EXPOSURE=${MAX_EXPOSURE:-2.0}
status=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

bin_dir=${REACHD_BIN_DIR:-$(swift build --show-bin-path 2>/dev/null || true)}
exec_start=/bin/true
if [ -n "$bin_dir" ] && [ -x "$bin_dir/reachd" ]; then exec_start="$bin_dir/reachd"; fi

# The shipped unit must start the installed path (make install rewrites /usr/local for PREFIX).
if ! grep -qx 'ExecStart=/usr/local/bin/reachd' systemd/reachd.service; then
  echo "check-units: systemd/reachd.service: ExecStart= is not /usr/local/bin/reachd" >&2
  status=1
fi

sed "s|^ExecStart=/usr/local/bin/reachd|ExecStart=$exec_start|" systemd/reachd.service > "$work/reachd.service"
cp systemd/reachd.socket systemd/reachd-*.target "$work/"
# The other services start the built reachd-dispatcher and reachctl (or /bin/true before a build).
for unit in reachd-dispatcher.service reachd-wait-online.service; do
  grep -q '^ExecStart=/usr/local/bin/' "systemd/$unit" || { echo "check-units: systemd/$unit: ExecStart= is not in /usr/local/bin" >&2; status=1; }
  if [ -n "$bin_dir" ] && [ -x "$bin_dir/reachctl" ] && [ -x "$bin_dir/reachd-dispatcher" ]; then
    sed "s|^ExecStart=/usr/local/bin/|ExecStart=$bin_dir/|" "systemd/$unit" > "$work/$unit"
  else
    sed "s|^ExecStart=/usr/local/bin/[^ ]*|ExecStart=/bin/true|" "systemd/$unit" > "$work/$unit"
  fi
done

out=$(cd "$work" && systemd-analyze verify --man=no ./*.service ./*.socket ./*.target 2>&1) || true
if [ -n "$out" ]; then
  echo "check-units: systemd-analyze verify is not silent:" >&2
  printf '%s\n' "$out" | sed "s|$work/|systemd/|g" >&2
  status=1
else
  echo "check-units: systemd-analyze verify: clean"
fi

security=$(systemd-analyze security --offline=true --no-pager systemd/reachd.service 2>&1) || true
exposure=$(printf '%s\n' "$security" | sed -n 's/.*Overall exposure level for reachd\.service: \([0-9.]*\).*/\1/p')
if [ -z "$exposure" ]; then
  echo "check-units: no exposure level in systemd-analyze security output:" >&2
  printf '%s\n' "$security" | tail -5 >&2
  status=1
elif awk -v e="$exposure" -v m="$MAX_EXPOSURE" 'BEGIN { exit !(e + 0 > m + 0) }'; then
  echo "check-units: reachd.service exposure $exposure is above $MAX_EXPOSURE:" >&2
  printf '%s\n' "$security" | grep '✗' >&2 || true
  status=1
else
  echo "check-units: reachd.service exposure $exposure (at most $MAX_EXPOSURE)"
fi

# The other services: reachd-wait-online only talks to a socket; the dispatcher runs root's
# scripts, so it keeps what they may need (docs/acting-on-changes.md says what and why).
for limit in reachd-wait-online.service:1.0 reachd-dispatcher.service:6.5; do
  unit=${limit%%:*} max=${limit#*:}
  exposure=$(systemd-analyze security --offline=true --no-pager "systemd/$unit" 2>&1 |
             sed -n "s/.*Overall exposure level for ${unit//./\\.}: \([0-9.]*\).*/\1/p")
  if [ -z "$exposure" ]; then
    echo "check-units: no exposure level for $unit in systemd-analyze security output" >&2
    status=1
  elif awk -v e="$exposure" -v m="$max" 'BEGIN { exit !(e + 0 > m + 0) }'; then
    echo "check-units: $unit exposure $exposure is above $max" >&2
    status=1
  else
    echo "check-units: $unit exposure $exposure (at most $max)"
  fi
done
exit $status
