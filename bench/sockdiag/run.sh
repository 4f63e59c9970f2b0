#!/usr/bin/env bash
# bench/sockdiag/run.sh [SOCKETS]: CPU per sock_diag dump of the passive quality sampler and the
# memory it adds, in namespaces of its own (root): an empty one; SOCKETS (default 2000)
# established TCP connections to a second namespace, idle; the same with every connection
# moving a byte each way between dumps (every socket a sample). Then one dump as `nobody`.
# Release build of bench/sockdiag in .build/sockdiag-bench. Leaves nothing behind.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ "$(id -u)" -eq 0 ] || { echo "sockdiag bench: needs root (network namespaces)" >&2; exit 1; }
sockets=${1:-2000}
id=rbsd$$
client=$id-c server=$id-s empty=$id-e
cleanup() {
  for ns in $client $server $empty; do
    ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
  done
}
trap cleanup EXIT
SWIFT="${SWIFT:-swift}"
scratch=.build/sockdiag-bench
scripts/fresh-scratch.sh "$scratch"
"$SWIFT" build -c release --package-path bench/sockdiag --scratch-path "$scratch" >&2
bin="$("$SWIFT" build -c release --package-path bench/sockdiag --scratch-path "$scratch" --show-bin-path)/sockdiag"

for ns in $client $server $empty; do ip netns add "$ns"; ip -n "$ns" link set lo up; done
ip -n $client link add eth0 type veth peer name up0 netns $server
ip -n $client addr add 10.99.0.2/24 dev eth0; ip -n $client link set eth0 up
ip -n $server addr add 10.99.0.1/24 dev up0; ip -n $server link set up0 up
ip -n $server addr add 198.51.100.1/32 dev lo
ip -n $client route add default via 10.99.0.1

ip netns exec $empty "$bin" --label "empty namespace" --dumps 200

holder() {  # SERVER|CLIENT: the far end echoes; the near end holds $sockets connections, poking each when asked
  python3 - "$@" <<'PY'
import os, resource, select, signal, socket, sys, time
resource.setrlimit(resource.RLIMIT_NOFILE, (16384, 16384))
role, count = sys.argv[1], int(sys.argv[2])
if role == "server":
    l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    l.bind(("198.51.100.1", 9000)); l.listen(4096)
    ep = select.epoll(); ep.register(l.fileno(), select.EPOLLIN); conns = {}
    while True:
        for fd, _ in ep.poll():
            if fd == l.fileno():
                c, _ = l.accept(); conns[c.fileno()] = c; ep.register(c.fileno(), select.EPOLLIN)
            else:
                data = conns[fd].recv(4096)
                if data: conns[fd].send(data)
else:
    conns = [socket.create_connection(("198.51.100.1", 9000)) for _ in range(count)]
    print("ready", flush=True)
    moving = len(sys.argv) > 3
    while True:
        if moving:
            for c in conns: c.send(b"x")
            for c in conns: c.recv(16)
        time.sleep(0.05)
PY
}
ip netns exec $server bash -c "$(declare -f holder); sockets=$sockets; holder server $sockets" &
sleep 1
ip netns exec $client bash -c "$(declare -f holder); holder client $sockets" > /tmp/$id-idle.out &
until grep -q ready /tmp/$id-idle.out 2>/dev/null; do sleep 0.2; done
ip netns exec $client "$bin" --label "$sockets established, idle" --dumps 200
ip netns pids $client | xargs -r kill -KILL; wait %2 2>/dev/null || true; sleep 1
ip netns exec $client bash -c "$(declare -f holder); holder client $sockets moving" > /tmp/$id-moving.out &
until grep -q ready /tmp/$id-moving.out 2>/dev/null; do sleep 0.2; done
ip netns exec $client "$bin" --label "$sockets established, all moving" --dumps 40 --pause 0.2
ip netns exec $client setpriv --reuid=nobody --regid=nogroup --clear-groups "$bin" --once
rm -f /tmp/$id-*.out
