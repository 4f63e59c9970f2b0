#!/usr/bin/env bash
# make fuzz: builds the libFuzzer targets with `swiftc -sanitize=fuzzer,address` (outside
# SwiftPM, whose executable targets bring a `main` of their own) and runs each for FUZZ_SECONDS
# (default 60) seconds, starting from the seeds in fuzz/corpus/TARGET. A crash, trap, timeout
# or out-of-memory input is saved in fuzz/regressions/TARGET/, which `make test` replays
# (FuzzRegressionTests): commit it with the fix.
#
# The gio target (the GIO module's reply handling, gio/reachdprotocol.c) is C: built with clang
# (FUZZ_CC, `scripts/deps.sh fuzz` makes sure one with libFuzzer is there) and ASan + UBSan.
# Before it fuzzes, it replays its seeds and fuzz/regressions/gio; `make test` runs it for a few
# seconds (check-gio-fuzz).
#
#   make fuzz [FUZZ_SECONDS=60] [FUZZ_TARGETS="varlink configuration http modemmanager netlink routeroptions captiveapi sockdiag nl80211 gio"]
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-60}
targets=${FUZZ_TARGETS:-"varlink configuration http modemmanager netlink routeroptions captiveapi sockdiag nl80211 gio"}
out=.build/fuzz
mkdir -p "$out"
# Optimized as the daemon is, so that the varlink target's time budget judges the code that runs.
flags=(-parse-as-library -sanitize=fuzzer,address -O -g -package-name reachd)
# The linker warns about sanitizer-internal symbols; that noise is not ours.
quiet() { "$@" 2> >(grep -v "Cannot export local symbol" >&2); }

if [ -n "$(tr ' ' '\n' <<<"$targets" | grep -vx gio)" ]; then
  echo "fuzz: building ReachabilityCore with coverage instrumentation"
  quiet swiftc "${flags[@]}" -module-name ReachabilityCore -emit-module -emit-module-path "$out/ReachabilityCore.swiftmodule" \
    -emit-library -static -o "$out/libReachabilityCore.a" $(find Sources/ReachabilityCore -name "*.swift" | sort)

  echo "fuzz: building ReachabilitySystem with coverage instrumentation"
  quiet swiftc "${flags[@]}" -module-name ReachabilitySystem -emit-module -emit-module-path "$out/ReachabilitySystem.swiftmodule" \
    -emit-library -static -o "$out/libReachabilitySystem.a" Sources/ReachabilitySystem/*.swift

  nl_cflags=$(pkg-config --cflags libnl-route-3.0 | sed 's/-I/-Xcc -I/g')
  nl_libs=$(pkg-config --libs libnl-route-3.0)
fi

status=0
for target in $targets; do
  case $target in
    gio)
      # shellcheck disable=SC2046
      quiet "${FUZZ_CC:-clang}" -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -O1 -g \
        -Wall -Wextra -Werror -Igio fuzz/targets/gio.c gio/reachdprotocol.c \
        $(pkg-config --cflags --libs gio-2.0 json-glib-1.0) -o "$out/fuzz-$target"
      mkdir -p "fuzz/regressions/$target"
      mapfile -t saved < <(find "fuzz/corpus/$target" "fuzz/regressions/$target" -type f ! -name .keep | sort)
      echo "fuzz: $target: replaying ${#saved[@]} saved inputs"
      if ! ASAN_OPTIONS=detect_leaks=1 "$out/fuzz-$target" -runs=1 "${saved[@]}" > "$out/$target-replay.log" 2>&1; then
        echo "fuzz: $target: A SAVED INPUT FAILS — see $out/$target-replay.log" >&2
        status=1
        continue
      fi ;;
    netlink)
      # The decoder and its entry point, as a module over ReachabilityCore and libnl.
      # shellcheck disable=SC2086
      quiet swiftc "${flags[@]}" -module-name ReachabilityLinuxFuzz -emit-module -emit-module-path "$out/ReachabilityLinuxFuzz.swiftmodule" \
        -emit-library -static -o "$out/libReachabilityLinuxFuzz.a" -I "$out" -I Sources/CNetlink $nl_cflags \
        Sources/ReachabilityLinux/Kernel/NetlinkMessageDecoder.swift Sources/ReachabilityLinux/Kernel/NetlinkAttributes.swift \
        Sources/ReachabilityLinux/Kernel/NetlinkFuzzTarget.swift Sources/ReachabilityLinux/Kernel/NetlinkDatagram.swift \
        Sources/ReachabilityLinux/Kernel/RouteLookup.swift \
        Sources/ReachabilityLinux/Kernel/NetworkNamespace.swift
      # shellcheck disable=SC2086
      quiet swiftc "${flags[@]}" -I "$out" -I Sources/CNetlink $nl_cflags fuzz/targets/netlink.swift \
        "$out/libReachabilityLinuxFuzz.a" "$out/libReachabilityCore.a" "$out/libReachabilitySystem.a" $nl_libs -o "$out/fuzz-$target" ;;
    *)
      quiet swiftc "${flags[@]}" -I "$out" "fuzz/targets/$target.swift" "$out/libReachabilityCore.a" -o "$out/fuzz-$target" ;;
  esac
  mkdir -p "$out/corpus/$target" "fuzz/regressions/$target"
  echo "fuzz: $target for $seconds s"
  # Swift's runtime keeps allocations that LeakSanitizer would report; C has no such excuse.
  leaks=0; [ "$target" = gio ] && leaks=1
  if ! ASAN_OPTIONS=detect_leaks=$leaks SWIFT_BACKTRACE=enable=no "$out/fuzz-$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
       -artifact_prefix="fuzz/regressions/$target/" -print_final_stats=1 \
       "$out/corpus/$target" "fuzz/corpus/$target" > "$out/$target.log" 2>&1; then
    echo "fuzz: $target FOUND A CRASH — see $out/$target.log; the input is in fuzz/regressions/$target/" >&2
    status=1
  fi
  grep -E "^stat::number_of_executed_units|^stat::new_units_added" "$out/$target.log" | sed "s/^/fuzz: $target: /" || true
done
exit $status
