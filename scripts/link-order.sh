#!/usr/bin/env bash
# `make link-order`: writes scripts/reachd.order, the functions a running reachd executes, for
# the release link (lld --symbol-ordering-file) to put side by side at the start of the code.
#
# Why: the kernel maps a program's code in 64 KiB windows around each page it first touches
# (fault-around), so a few hundred functions scattered over 10 MB of code keep most of it
# resident. Laid out together they fill a few windows. A stale list costs nothing but that:
# names the linker does not find are skipped.
#
# The functions of an event — from reading the netlink socket to the subscriber's send — come
# first, side by side: an idle daemon meets each change with its caches and TLBs cold, and the
# fewer pages that code spans, the less the first event after a pause pays for it.
#
# How: runs the release reachd given (default: the one `make release` built) under valgrind's
# callgrind in a network namespace of its own, through what a running daemon does — start-up,
# GetStatus, a subscriber, link, address and route changes, connectivity checks against an HTTP
# server in the namespace, a host check — and keeps the functions of reachd itself,
# in the order callgrind lists them.
#   scripts/link-order.sh [REACHD] [REACHCTL]
# Needs root (a namespace) and valgrind (installed with apt-get when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "link-order: needs root (a network namespace)" >&2; exit 1; }
bin_dir=$(swift build -c release --show-bin-path)
reachd=${1:-$bin_dir/reachd}
reachctl=${2:-$bin_dir/reachctl}
for b in "$reachd" "$reachctl"; do [ -x "$b" ] || { echo "link-order: $b is missing (make release first)" >&2; exit 1; }; done
if ! command -v valgrind >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null
fi

ns=reachd-order-$$
work=$(mktemp -d)
cleanup() {
  ip netns pids "$ns" 2>/dev/null | xargs -r kill -TERM 2>/dev/null || true
  sleep 0.5
  ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

ip netns add "$ns"
ip -n "$ns" link set lo up
ip -n "$ns" link add eth0 type veth peer name up0
ip -n "$ns" addr add 10.91.0.1/24 dev up0
ip -n "$ns" link set up0 up

# A connectivity check server: 204 for the check URL.
cat > "$work/server.py" <<'EOF'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(204); self.send_header("Content-Length", "0"); self.end_headers()
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(("10.91.0.1", 8080), H).serve_forever()
EOF
ip netns exec "$ns" python3 "$work/server.py" &
cat > "$work/reachd.conf" <<EOF
[Connectivity]
URL=http://10.91.0.1:8080/generate_204
Interval=2
[Cellular]
ModemManager=no
EOF

sock=$work/reachd.sock
# start_profiled NAME CONFIG [CALLGRIND OPTION...]: reachd under callgrind in the namespace
# (profile $work/NAME.out, log $work/NAME.log), and a `reachctl monitor` subscribed to it.
start_profiled() {
  local name=$1 config=$2; shift 2
  rm -f "$sock"
  ip netns exec "$ns" valgrind -q --tool=callgrind --demangle=no --dump-instr=no --compress-strings=no --compress-pos=no \
    "$@" --callgrind-out-file="$work/$name.out" "$reachd" --config "$config" --socket "$sock" \
    >"$work/$name.log" 2>&1 &
  daemon=$!
  for _ in $(seq 1 300); do [ -S "$sock" ] && break; sleep 0.1; done
  [ -S "$sock" ] || { cat "$work/$name.log" >&2; echo "link-order: reachd did not start" >&2; exit 1; }
  sleep 2
  "$reachctl" --socket "$sock" monitor >/dev/null 2>&1 &
  monitor=$!
  sleep 1
}
# stop_profiled NAME: stops both; the profile must be there.
stop_profiled() {
  kill "$monitor" 2>/dev/null || true
  sleep 1
  kill -TERM "$daemon"
  wait "$daemon" || true
  [ -s "$work/$1.out" ] || { cat "$work/$1.log" >&2; echo "link-order: no profile written ($1)" >&2; exit 1; }
}

start_profiled callgrind "$work/reachd.conf"
for round in 1 2 3; do
  ip -n "$ns" link set eth0 up
  ip -n "$ns" addr replace 10.91.0.2/24 dev eth0
  ip -n "$ns" route replace default via 10.91.0.1 dev eth0
  sleep 4
  "$reachctl" --socket "$sock" status >/dev/null || true
  "$reachctl" --socket "$sock" status --json >/dev/null || true
  "$reachctl" --socket "$sock" check 10.91.0.1 --port 8080 >/dev/null || true
  ip -n "$ns" link set up0 down
  sleep 2
  ip -n "$ns" link set up0 up
  sleep 3
  ip -n "$ns" addr del 10.91.0.2/24 dev eth0
  ip -n "$ns" link set eth0 down
  sleep 2
done
stop_profiled callgrind

# The event path on its own: a second run that counts only inside the monitor's drain() (the
# read, the classification, the observers, the server's fan-out), while a subscriber listens
# and the link's carrier goes down and up.
ip -n "$ns" link set eth0 up
ip -n "$ns" addr replace 10.91.0.2/24 dev eth0
ip -n "$ns" route replace default via 10.91.0.1 dev eth0
printf '[Connectivity]\nEnabled=no\n[Cellular]\nModemManager=no\n' > "$work/event.conf"
start_profiled event "$work/event.conf" --toggle-collect='$s17ReachabilityLinux0A7MonitorC5drain*'
for _ in $(seq 1 20); do
  ip -n "$ns" link set up0 down; sleep 0.3
  ip -n "$ns" link set up0 up; sleep 0.3
done
stop_profiled event

# The functions reachd defines, the event path's first, then the others in callgrind's order;
# the C libraries' are not ours to place.
nm --defined-only "$reachd" | awk '$2 ~ /^[tTwW]$/ {print $3}' | sort -u > "$work/defined"
grep -h '^fn=' "$work/event.out" "$work/callgrind.out" | sed 's/^fn=//' | awk '!seen[$0]++' \
  | awk 'NR == FNR { defined[$0] = 1; next } ($0 in defined)' "$work/defined" - > scripts/reachd.order
event_path=$(grep '^fn=' "$work/event.out" | sed 's/^fn=//' | sort -u | comm -12 - "$work/defined" | wc -l)
echo "link-order: scripts/reachd.order: $(wc -l < scripts/reachd.order) functions, the first $event_path on the event path"
