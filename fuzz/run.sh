#!/usr/bin/env bash
# make fuzz: builds the libFuzzer targets with `swiftc -sanitize=fuzzer,address` (outside
# SwiftPM, whose executable targets bring a `main` of their own) and runs each for FUZZ_SECONDS
# (default 60) seconds, starting from the seeds in fuzz/corpus/TARGET. A crash, trap, timeout
# or out-of-memory input is saved in fuzz/regressions/TARGET/, which `make test` replays
# (FuzzRegressionTests): commit it with the fix.
#
#   make fuzz [FUZZ_SECONDS=60] [FUZZ_TARGETS="varlink configuration http modemmanager netlink routeroptions captiveapi"]
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-60}
targets=${FUZZ_TARGETS:-"varlink configuration http modemmanager netlink routeroptions captiveapi"}
out=.build/fuzz
mkdir -p "$out"
# Optimized as the daemon is, so that the varlink target's time budget judges the code that runs.
flags=(-parse-as-library -sanitize=fuzzer,address -O -g -package-name reachd)
# The linker warns about sanitizer-internal symbols; that noise is not ours.
quiet() { "$@" 2> >(grep -v "Cannot export local symbol" >&2); }

echo "fuzz: building ReachabilityCore with coverage instrumentation"
quiet swiftc "${flags[@]}" -module-name ReachabilityCore -emit-module -emit-module-path "$out/ReachabilityCore.swiftmodule" \
  -emit-library -static -o "$out/libReachabilityCore.a" $(find Sources/ReachabilityCore -name "*.swift" | sort)

echo "fuzz: building ReachabilitySystem with coverage instrumentation"
quiet swiftc "${flags[@]}" -module-name ReachabilitySystem -emit-module -emit-module-path "$out/ReachabilitySystem.swiftmodule" \
  -emit-library -static -o "$out/libReachabilitySystem.a" Sources/ReachabilitySystem/*.swift

nl_cflags=$(pkg-config --cflags libnl-route-3.0 | sed 's/-I/-Xcc -I/g')
nl_libs=$(pkg-config --libs libnl-route-3.0)

status=0
for target in $targets; do
  case $target in
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
  if ! ASAN_OPTIONS=detect_leaks=0 SWIFT_BACKTRACE=enable=no "$out/fuzz-$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
       -artifact_prefix="fuzz/regressions/$target/" -print_final_stats=1 \
       "$out/corpus/$target" "fuzz/corpus/$target" > "$out/$target.log" 2>&1; then
    echo "fuzz: $target FOUND A CRASH — see $out/$target.log; the input is in fuzz/regressions/$target/" >&2
    status=1
  fi
  grep -E "^stat::number_of_executed_units|^stat::new_units_added" "$out/$target.log" | sed "s/^/fuzz: $target: /" || true
done
exit $status
