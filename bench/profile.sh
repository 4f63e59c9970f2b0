#!/usr/bin/env bash
# Where reachd's time goes (not part of `make bench`: tracing slows the daemon down).
#  1. latency run under ftrace (scheduler events, some system calls) → bench/anatomy.py:
#     each change's steps, for ip monitor and for reachd
#  2. fan-out to 5,000 subscribers with `perf record -g` on reachd → top symbols
#  3. the same fan-out (and the C floor's) under ftrace (the scheduler) → bench/fanout_anatomy.py:
#     how much of each event the sender and the reader ran side by side
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
# 1. The anatomy of each latency change: the scheduler's events and some system calls of the
#    whole machine, recorded by ftrace during a latency run, read by bench/anatomy.py.
T=/sys/kernel/tracing
[ -e "$T/set_event" ] || mount -t tracefs nodev "$T"
buffer=$(cat "$T/buffer_size_kb" | grep -o '^[0-9]*')
untrace() { echo 0 > "$T/tracing_on"; echo > "$T/set_event"; echo > "$T/trace"; echo "$buffer" > "$T/buffer_size_kb"; }
trap untrace EXIT
gcc -O2 -Wall -Wextra -o bench/out/stamp bench/stamp.c
echo 0 > "$T/tracing_on"; echo > "$T/trace"; echo 32768 > "$T/buffer_size_kb"; echo > "$T/set_event"
for e in sched:sched_waking sched:sched_switch syscalls:sys_enter_sendto syscalls:sys_enter_write \
         syscalls:sys_enter_recvfrom syscalls:sys_exit_poll; do
  echo "$e" >> "$T/set_event"
done
echo 1 > "$T/tracing_on"
python3 bench/reachbench.py --reachd "$REACHD" --only latency --changes 40 --no-write > bench/out/profile-latency.txt 2>&1
echo 0 > "$T/tracing_on"
cp "$T/trace" bench/out/latency-trace.txt
untrace
python3 bench/anatomy.py bench/out/latency-trace.txt

bench/run.sh --reachd "$REACHD" --only fanout --fanout 5000 --fanout-triggers 40 --no-write > bench/out/profile-fanout.txt 2>&1 &
run=$!
pid=$(find_pid fanout5000.sock)
sleep 6
perf record -F 999 -g -p "$pid" -o bench/out/perf-fanout.data -- sleep 6 2>/dev/null >/dev/null || true
wait "$run"
perf report -i bench/out/perf-fanout.data --no-children --sort dso,sym --stdio -g none 2>/dev/null \
  | grep -E "^ +[0-9]" | head -15 || true

# 3. Who ran where during each 5,000-subscriber fan-out, reachd's and the C floor's: the
#    scheduler's switches and wake-ups through ftrace, read by bench/fanout_anatomy.py.
gcc -O2 -Wall -Wextra -o bench/out/fanout bench/fanout.c
gcc -O2 -Wall -Wextra -o bench/out/fanout_floor bench/fanout_floor.c
echo 0 > "$T/tracing_on"; echo > "$T/trace"; echo 65536 > "$T/buffer_size_kb"; echo > "$T/set_event"
echo sched:sched_switch >> "$T/set_event"
echo sched:sched_waking >> "$T/set_event"
echo sched:sched_migrate_task >> "$T/set_event"
echo 1 > "$T/tracing_on"
python3 bench/reachbench.py --reachd "$REACHD" --only fanout --fanout 5000 --fanout-triggers 10 \
  --fanout-floor-bin bench/out/fanout_floor --no-write > bench/out/profile-fanout-sched.txt 2>&1
echo 0 > "$T/tracing_on"
cp "$T/trace" bench/out/fanout-trace.txt
untrace
python3 bench/fanout_anatomy.py bench/out/fanout-trace.txt
