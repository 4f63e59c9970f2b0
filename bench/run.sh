#!/usr/bin/env bash
# `make bench`: builds the fan-out client, runs every benchmark (bench/reachbench.py) against the
# reachd binary given, prints the table and rewrites the figures in BENCHMARKS.md.
# Whatever happens, it leaves no namespace and no process behind: reachbench.py cleans up after
# itself, and this trap removes the namespaces of this run (rb<id>-*, rbo<id>-*) and ends the
# processes still inside them.
#   bench/run.sh --reachd PATH [reachbench.py options]      (--fake: self-check of the harness)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
  echo "bench: needs root (network namespaces); skipped" >&2
  exit 1
fi
export BENCH_ID="${BENCH_ID:-$$}"
PYTHON="${PYTHON:-python3}"

cleanup() {
  local ns
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^rbo?${BENCH_ID}-" || true); do
    ip netns pids "$ns" 2>/dev/null | xargs -r kill -TERM 2>/dev/null || true
    sleep 0.2
    ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
  done
  rm -f bench/out/*.sock
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir -p bench/out
gcc -O2 -Wall -Wextra -o bench/out/fanout bench/fanout.c
gcc -O2 -Wall -Wextra -o bench/out/fanout_floor bench/fanout_floor.c
gcc -O2 -Wall -Wextra -o bench/out/stamp bench/stamp.c
# The event path outside the daemon (bench/pipeline), a package of its own over ReachabilityCore,
# in a scratch directory started afresh when reachd's list of files changed.
SWIFT="${SWIFT:-swift}"
scratch=.build/pipeline
scripts/fresh-scratch.sh "$scratch"
"$SWIFT" build -c release --package-path bench/pipeline --scratch-path "$scratch" >&2
pipeline="$("$SWIFT" build -c release --package-path bench/pipeline --scratch-path "$scratch" --show-bin-path)/pipeline"
start=$(date +%s)
"$PYTHON" bench/reachbench.py --pipeline-bin "$pipeline" "$@"
# What the GIO module costs a GLib app (bench/gio.py, ~10 s): printed; BENCHMARKS.md's GIO table is
# updated by hand. Not with --fake or a subset (--only).
reachd_bin="" previous=""
for arg in "$@"; do [ "$previous" = --reachd ] && reachd_bin=$arg; previous=$arg; done
if [ -n "$reachd_bin" ] && [ -f .build/gio/libgioreachd.so ] && [[ " $* " != *" --fake "* && " $* " != *" --only "* ]]; then
  "$PYTHON" bench/gio.py --reachd "$reachd_bin"
fi
echo "bench: done in $(( $(date +%s) - start )) s"
