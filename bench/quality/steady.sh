#!/usr/bin/env bash
# bench/quality/steady.sh [SECONDS]: the events a steady link makes. reachd (debug build) in a
# namespace of its own behind a veth, an app's TCP connection to a server beyond the gateway
# exchanging a request every 200 ms, the check off, [LinkQuality] at its defaults (a dump every
# 10 s). Counts the events after the first class is measured, by reason, over SECONDS (default
# 600), and prints reachd's CPU time. Root; leaves nothing behind.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ "$(id -u)" -eq 0 ] || { echo "quality bench: needs root (network namespaces)" >&2; exit 1; }
seconds=${1:-600}
id=rbq$$; host=$id-h; net=$id-n; dir=$(mktemp -d)
cleanup() {
  for ns in $host $net; do
    ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
  done
  rm -rf "$dir"
}
trap cleanup EXIT
bin=$(swift build --show-bin-path)
for ns in $host $net; do ip netns add "$ns"; ip -n "$ns" link set lo up; done
ip -n $host link add eth0 type veth peer name up0 netns $net
ip -n $host addr add 10.98.0.2/24 dev eth0; ip -n $host link set eth0 up
ip -n $net addr add 10.98.0.1/24 dev up0; ip -n $net link set up0 up
ip -n $net addr add 198.51.100.1/32 dev lo
ip -n $host route add default via 10.98.0.1
printf '[Connectivity]\nEnabled=no\n[Cellular]\nModemManager=no\n[Interfaces]\nNetworkManager=no\n' > "$dir/reachd.conf"
# STATE_DIRECTORY: its event numbers in $dir, not /var/lib/reachd.
STATE_DIRECTORY="$dir" ip netns exec $host "$bin/reachd" --config "$dir/reachd.conf" --socket "$dir/sock" 2> "$dir/reachd.log" &
reachd=$!
ip netns exec $net python3 -c '
import socket, threading
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("198.51.100.1", 7000)); s.listen()
def serve(c):
    while (data := c.recv(4096)): c.sendall(b"x" * 512)
while True:
    c, _ = s.accept(); threading.Thread(target=serve, args=(c,), daemon=True).start()' &
sleep 1
ip netns exec $host python3 -c '
import socket, time
c = socket.create_connection(("198.51.100.1", 7000))
while True:
    c.sendall(b"q" * 64); c.recv(4096); time.sleep(0.2)' &
for _ in $(seq 50); do "$bin/reachctl" --socket "$dir/sock" status >/dev/null 2>&1 && break; sleep 0.2; done
until "$bin/reachctl" --socket "$dir/sock" status --json | grep -q '"source":"passive"'; do sleep 1; done
start_cpu=$(awk '{print $14 + $15}' /proc/$reachd/stat)
"$bin/reachctl" --socket "$dir/sock" monitor --json > "$dir/events" &
monitor=$!
sleep "$seconds"
kill $monitor
end_cpu=$(awk '{print $14 + $15}' /proc/$reachd/stat)
ticks=$(getconf CLK_TCK)
echo "steady link, $seconds s after the first measured class:"
"$bin/reachctl" --socket "$dir/sock" status
python3 - "$dir/events" <<'PY'
import json, sys, collections
events = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
changed = [e for e in events if e["event"] != "initial"]
print(f"events after the initial one: {len(changed)}", dict(collections.Counter(e["reason"]["code"] for e in changed)))
PY
echo "reachd CPU over the run: $(( (end_cpu - start_cpu) * 1000 / ticks )) ms"
