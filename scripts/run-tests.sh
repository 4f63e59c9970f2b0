#!/usr/bin/env bash
# Runs the Swift tests (the arguments go to `swift test`) and counts the skipped ones.
# Root-gated tests skip through the test framework (`.needsRoot()`, `.requires(…)` traits), so a
# skip is reported as a skip and counted here, never as a pass. As root (CI) nothing may skip:
# a missing tool is a failure naming the command that installs it, and any skip fails the run.
set -uo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
log=$(mktemp /tmp/reachd-test-log.XXXXXX)
trap 'rm -f "$log"' EXIT

$SWIFT test "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

# Swift Testing: `◇ Test name() skipped: "reason"` (or a whole suite); XCTest: `… skipped`.
skipped=$(sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -Ec '(Test|Suite) .* skipped(: .*|\.)?$|Test Case .* skipped' || true)
echo "run-tests: $skipped test(s) skipped"
if [ "$skipped" -gt 0 ]; then
  sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '(Test|Suite) .* skipped(: .*|\.)?$|Test Case .* skipped' | sed 's/^/  /'
fi
if [ "$status" -ne 0 ]; then exit "$status"; fi
if [ "$(id -u)" -eq 0 ] && [ "$skipped" -gt 0 ]; then
  echo "run-tests: FAIL: $skipped test(s) skipped as root; as root every test must run" >&2
  exit 1
fi
