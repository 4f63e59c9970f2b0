#!/usr/bin/env bash
# Where reachd's time goes (not part of `make bench`: tracing slows the daemon down).
#  1. latency run with `perf trace` on reachd's system calls → per-step breakdown of an event
#  2. fan-out to 5,000 subscribers with `perf record -g` on reachd → top symbols
#   bench/profile.sh PATH/TO/reachd
set -euo pipefail
cd "$(dirname "$0")/.."
REACHD="${1:?usage: bench/profile.sh PATH/TO/reachd}"
mkdir -p bench/out
find_pid() {  # the reachd serving socket $1 (started by reachbench.py, so ours)
  local p=""
  for _ in $(seq 1 300); do
    p=$(pgrep -f "reachd --socket $PWD/bench/out/$1" | head -1 || true)
    [ -n "$p" ] && { echo "$p"; return; }
    sleep 0.1
  done
  echo "no reachd on $1" >&2; exit 1
}
bench/run.sh --reachd "$REACHD" --only latency --changes 100 --no-write > bench/out/profile-latency.txt 2>&1 &
run=$!
pid=$(find_pid latency.sock)
sleep 0.5
timeout -s INT 2 perf trace -p "$pid" -e recvmsg,sendto,write,epoll_wait,futex -o bench/out/perf-trace.txt || true
wait "$run"
python3 bench/trace_breakdown.py bench/out/perf-trace.txt

bench/run.sh --reachd "$REACHD" --only fanout --fanout 5000 --fanout-triggers 40 --no-write > bench/out/profile-fanout.txt 2>&1 &
run=$!
pid=$(find_pid fanout5000.sock)
sleep 6
perf record -F 999 -g -p "$pid" -o bench/out/perf-fanout.data -- sleep 6 2>/dev/null >/dev/null || true
wait "$run"
perf report -i bench/out/perf-fanout.data --no-children --sort dso,sym --stdio -g none 2>/dev/null \
  | grep -E "^ +[0-9]" | head -15
