#!/usr/bin/env bash
# The release binaries need no Swift toolchain: installs them (`make install` into a temporary
# DESTDIR, stripped), then, in a private mount namespace where an empty directory is bound over
# the toolchain, checks that
#   0. a binary that links the Swift runtime dynamically (the debug reachctl) no longer starts,
#      so the toolchain really is out of reach;
#   1. the installed reachd and reachctl link no Swift library, carry no symbol table, and start;
#   2. reachd runs in a network namespace of its own (connectivity check and ModemManager off)
#      and `reachctl status` sees a veth with an address and a default route appear there;
#   3. the installed GIO module links no Swift library, and a python3-gi app gets reachd's
#      network monitor from it.
#   test-static.sh RELEASE_BIN_DIR
# Needs root (mount namespace, network namespace); skips otherwise. A few seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
bin_dir=${1:?usage: test-static.sh RELEASE_BIN_DIR}

if [ "$(id -u)" -ne 0 ]; then echo "check-static: skipped: needs root (mount and network namespaces)"; exit 0; fi

# Where the Swift runtime lives: the toolchain's directory, and the runtime library paths the
# compiler names (in case the toolchain sits in /usr, which cannot be hidden as a whole).
swift_bin=$(readlink -f "$(command -v swift)")
toolchain=$(cd "$(dirname "$swift_bin")/../.." && pwd)
hide=()
if [ "$toolchain" != / ] && [ "$toolchain" != /usr ]; then
  hide+=("$toolchain")
else
  while IFS= read -r dir; do [ -d "$dir" ] && hide+=("$dir"); done < <(
    swift -print-target-info | /usr/bin/python3 -c 'import json,sys; print("\n".join(json.load(sys.stdin)["paths"]["runtimeLibraryPaths"]))')
fi
[ ${#hide[@]} -gt 0 ] || { echo "check-static: FAIL: cannot tell where the Swift runtime is" >&2; exit 1; }
debug_reachctl="$(swift build --show-bin-path)/reachctl"

work=$(mktemp -d /tmp/reachd-static.XXXXXX)
# The daemon's last event number goes here, not into the machine's /var/lib/reachd.
export STATE_DIRECTORY=$work
ns=rchs$$
trap 'ip netns del "$ns" 2>/dev/null || true; rm -rf "$work"' EXIT
make -s install DESTDIR="$work/root" PREFIX=/usr BIN_DIR="$bin_dir" >/dev/null
mkdir -p "$work/empty" "$work/run"
printf '[Connectivity]\nEnabled=no\n[Cellular]\nModemManager=no\n' > "$work/reachd.conf"
ip netns add "$ns"

# Everything below runs with the toolchain hidden.
unshare -m --propagation private bash -s -- "$work" "$ns" "$debug_reachctl" "${hide[@]}" <<'INNER'
set -uo pipefail
work=$1 ns=$2 debug_reachctl=$3; shift 3
failures=0
log() { echo "check-static: $*"; }
fail() { echo "check-static: FAIL: $*" >&2; failures=$((failures + 1)); }
for dir in "$@"; do mount --bind "$work/empty" "$dir" || { fail "cannot hide $dir"; exit 1; }; done
log "hidden: $* (now empty: $(ls -A "$1" | wc -l) entries)"
unset LD_LIBRARY_PATH
reachd=$work/root/usr/bin/reachd reachctl=$work/root/usr/bin/reachctl dispatcher=$work/root/usr/bin/reachd-dispatcher

# 0. The hiding works: a binary that needs the toolchain's runtime fails to start.
if [ -x "$debug_reachctl" ]; then
  if out=$("$debug_reachctl" --version 2>&1); then
    fail "the debug reachctl (Swift runtime linked dynamically) still starts: $out"
  else
    log "debug reachctl without the toolchain: ${out%%$'\n'*}"
  fi
fi

# 1. The installed binaries.
for b in "$reachd" "$reachctl" "$dispatcher"; do
  missing=$(ldd "$b" 2>&1 | grep -E 'not found|libswift|libFoundation|libdispatch' || true)
  [ -z "$missing" ] || fail "$(basename "$b") still wants: $missing"
  readelf -S "$b" | grep -q '\.symtab' && fail "$(basename "$b") is not stripped"
done
out=$("$reachd" --version 2>&1) && [[ $out == "reachd "* ]] && log "$out" || fail "reachd --version: $out"
out=$("$reachctl" --version 2>&1) && [[ $out == "reachctl "* ]] && log "$out" || fail "reachctl --version: $out"
out=$("$dispatcher" --version 2>&1) && [[ $out == "reachd-dispatcher "* ]] && log "$out" || fail "reachd-dispatcher --version: $out"
out=$("$dispatcher" --check-config --config "$work/root/etc/reachd/dispatcher.conf" 2>&1) || fail "reachd-dispatcher --check-config: $out"
out=$("$reachd" --check-config --config "$work/reachd.conf" 2>&1) || fail "reachd --check-config: $out"

# 2. The daemon at work, in our namespace.
sock=$work/run/reachd.sock
ip netns exec "$ns" "$reachd" --config "$work/reachd.conf" --socket "$sock" > "$work/reachd.log" 2>&1 &
daemon=$!
status() { "$reachctl" --socket "$sock" status 2>&1; }
ok=
for _ in $(seq 100); do status >/dev/null && { ok=1; break; }; sleep 0.1; done
[ -n "$ok" ] || fail "reachctl status got no answer: $(status); reachd log: $(cat "$work/reachd.log")"
ip -n "$ns" link add rchs0 type veth peer name rchs0p
ip -n "$ns" link set rchs0p up
ip -n "$ns" link set rchs0 up
ip -n "$ns" addr add 10.232.0.2/24 dev rchs0
ip -n "$ns" route add default via 10.232.0.1 dev rchs0
ok=
for _ in $(seq 100); do [[ $(status) == *"ethernet (rchs0)"* ]] && { ok=1; break; }; sleep 0.1; done
if [ -n "$ok" ]; then log "reachctl status: $(status)"; else fail "status never showed rchs0: $(status)"; fi
# 3. The installed GIO module (C, no Swift inside apps) in a GLib app, the toolchain still hidden.
module=$(find "$work/root" -name libgioreachd.so | head -1)
if [ -z "$module" ]; then
  fail "no libgioreachd.so installed"
else
  missing=$(ldd "$module" 2>&1 | grep -E 'not found|libswift|libFoundation|libdispatch' || true)
  [ -z "$missing" ] || fail "libgioreachd.so wants: $missing"
  out=$(GIO_EXTRA_MODULES=$(dirname "$module") REACHD_SOCKET=$sock /usr/bin/python3 -c \
    'from gi.repository import Gio; m = Gio.NetworkMonitor.get_default(); print(type(m).__name__, m.get_network_available())' 2>&1)
  [ "$out" = "GNetworkMonitorReachd True" ] && log "a GLib app with the installed module: $out" || fail "a GLib app with the installed module: $out"
fi
kill -TERM "$daemon"; wait "$daemon" || fail "reachd exited $? on SIGTERM"
exit $((failures > 0))
INNER
echo "check-static: release binaries run without the Swift toolchain: ok"
