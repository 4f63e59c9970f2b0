#!/usr/bin/env bash
# bench/sockdiag/run.sh [SOCKETS...]: CPU per sock_diag dump of the passive quality sampler and the
# memory it keeps, in namespaces of its own (root). For each count (default 0 2000 20000 60000): that
# many established TCP connections from a client namespace to a server namespace over a veth, held
# by a helper running as `nobody` (another user's sockets); the sampler dumps the client namespace
# while they are idle, then while every connection moves a byte each way in turn (every socket read
# is a vote), and tells its resident memory 30 s after the last dump. At 60000 the moving run is
# repeated without the 16,384-socket limit, for comparison. Then one dump as `nobody`.
# Release build of bench/sockdiag in .build/sockdiag-bench. Leaves nothing behind. ~12 min.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ "$(id -u)" -eq 0 ] || { echo "sockdiag bench: needs root (network namespaces)" >&2; exit 1; }
sizes=("$@"); [ ${#sizes[@]} -gt 0 ] || sizes=(0 2000 20000 60000)
id=rbsd$$
client=$id-c server=$id-s
cleanup() {
  for ns in $client $server; do
    ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
  done
  rm -f /tmp/$id-*
}
trap cleanup EXIT
SWIFT="${SWIFT:-swift}"
scratch=.build/sockdiag-bench
scripts/fresh-scratch.sh "$scratch"
"$SWIFT" build -c release --package-path bench/sockdiag --scratch-path "$scratch" >&2
bin="$("$SWIFT" build -c release --package-path bench/sockdiag --scratch-path "$scratch" --show-bin-path)/sockdiag"

for ns in $client $server; do ip netns add "$ns"; ip -n "$ns" link set lo up; done
ip -n $client link add eth0 type veth peer name up0 netns $server
ip -n $client addr add 10.99.0.2/24 dev eth0; ip -n $client link set eth0 up
ip -n $server addr add 10.99.0.1/24 dev up0; ip -n $server link set up0 up
ip -n $server addr add 198.51.100.1/32 dev lo
ip -n $client route add default via 10.99.0.1
# 60,000 connections from one address to one port need more than the default ephemeral ports.
ip netns exec $client sysctl -qw net.ipv4.ip_local_port_range="1024 65535"
ip netns exec $client sysctl -qw net.ipv4.tcp_tw_reuse=1 net.ipv4.tcp_fin_timeout=2   # the previous count's
ip netns exec $server sysctl -qw net.core.somaxconn=8192

# The far end: a listener that never accepts. The kernel completes each handshake and
# acknowledges what the connection sends, so the near end moves data; nothing here holds a
# descriptor per connection (a process may hold 20,000 at most on some machines).
ip netns exec $server sysctl -qw net.core.somaxconn=262144
ip netns exec $server /usr/bin/python3 -c '
import socket, time
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("198.51.100.1", 9000)); l.listen(262144)
time.sleep(1e9)' &
sleep 1

# The near end, as nobody: COUNT connections, idle until the flag file exists, then each sends a
# byte, all in turn, every half second.
holder() {  # COUNT FLAG
  ip netns exec $client /usr/bin/python3 - "$1" "$2" <<'PY'
import os, resource, socket, sys, time
count, flag = int(sys.argv[1]), sys.argv[2]
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
os.setgroups([]); os.setgid(65534); os.setuid(65534)
conns = [socket.create_connection(("198.51.100.1", 9000)) for _ in range(count)]
print("ready", flush=True)
while True:
    if conns and os.path.exists(flag):
        for c in conns: c.send(b"x")
    time.sleep(0.5)
PY
}

for n in "${sizes[@]}"; do
  flag=/tmp/$id-move-$n
  parts=$(( (n + 14999) / 15000 )); [ $parts -gt 0 ] || parts=1
  for ((p = 0; p < parts; p++)); do
    holder $(( n / parts + (p < n % parts ? 1 : 0) )) "$flag" > /tmp/$id-$n-$p.out 2>&1 &
    disown
  done
  until [ "$(cat /tmp/$id-$n-*.out 2>/dev/null | grep -c ready)" -eq $parts ]; do sleep 0.5; done
  dumps=$(( n >= 20000 ? 20 : 100 ))
  ip netns exec $client "$bin" --label "$n sockets, idle" --dumps $dumps
  touch "$flag"; sleep 2
  ip netns exec $client "$bin" --label "$n sockets, moving" --dumps 10 --pause 1 --settle 30
  if [ "$n" -ge 60000 ]; then
    ip netns exec $client "$bin" --label "$n sockets, moving, no limit" --dumps 10 --pause 1 --settle 30 --limit 100000000
  fi
  rm -f "$flag"
  ip netns pids $client | xargs -r kill -KILL
  # The closed connections linger in FIN_WAIT2 (the far end never closes) for tcp_fin_timeout.
  until [ "$(ip netns exec $client ss -Htn state connected | wc -l)" -eq 0 ]; do sleep 1; done
done
ip netns exec $client setpriv --reuid=nobody --regid=nogroup --clear-groups "$bin" --once
