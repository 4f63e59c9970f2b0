#!/usr/bin/env bash
# reachd under systemd as PID 1: boots systemd in a container (systemd-nspawn over an
# overlay of `/`, inside a private mount namespace, with a private network namespace), installs
# reachd into it with `make install`, and checks that
#   0. under the service's exact sandbox, the Swift test binary passes and the system bus answers,
#   1. reachd.service reaches "active" (Type=notify: READY=1 arrived) and runs as user reachd,
#   2. `systemctl show -p StatusText reachd` carries the status, and follows a change
#      (a veth with an address and a default route, made inside the container's own netns),
#   3. `reachctl status` answers through /run/reachd/io.reachd.Reachability as an unprivileged user,
#   4. socket activation: with the service stopped and the socket kept, a connection starts it,
#   5. `systemctl reload` with a broken configuration leaves it running (same PID); a fixed one reloads;
#      a broken one at start fails with 78 (EX_CONFIG) and is not restarted,
#   6. the watchdog never fired (NRestarts=0) and nothing in the unit was refused by the sandbox,
#   7. the unit's user mapping keeps callers apart: with MaxConnectionsPerUser=2, one user holding
#      two connections locks out neither another user nor itself only, and a member of
#      [Simulation] Group= may simulate while another user may not.
# Needs root: without it, it says SKIPPED and exits 0. As root nothing is skipped silently: a
# missing tool or test binary is a failure naming what installs or builds it, and
# REACHD_SKIP_SYSTEMD_TEST=1 is refused in CI (CI set, as .ci/run does). About 15 s.
set -euo pipefail
cd "$(dirname "$0")/.."

check=check-systemd
source scripts/container.sh

bin_dir=${REACHD_BIN_DIR:-$(swift build --show-bin-path)}
[ -x "$bin_dir/reachd" ] && [ -x "$bin_dir/reachctl" ] || { echo "check-systemd: no reachd/reachctl in $bin_dir (build first)" >&2; exit 1; }
tests_bin="$bin_dir/reachdPackageTests.xctest"
[ -x "$tests_bin" ] || { echo "check-systemd: FAIL: no test binary $tests_bin: run swift build --build-tests (make check-systemd does)" >&2; exit 1; }

# --- The container's files: the upper layer of the overlay, written before it is mounted.
make -s install DESTDIR="$upper" PREFIX=/usr/local BIN_DIR="$bin_dir" >/dev/null
reachctl=(/usr/local/bin/reachctl status)
mkdir -p "$upper/etc/reachd/reachd.conf.d"
# Never any outside traffic (and no ModemManager in the container).
printf '[Connectivity]\nEnabled=no\n[Cellular]\nModemManager=no\n' > "$upper/etc/reachd/reachd.conf.d/50-test.conf"
# A short watchdog, so that a daemon that does not ping is caught within the run.
mkdir -p "$upper/etc/systemd/system/reachd.service.d"
# And a short start timeout: a daemon that never sends READY=1 fails in 20 s, not 90.
printf '[Service]\nWatchdogSec=2s\nTimeoutStartSec=20s\n' > "$upper/etc/systemd/system/reachd.service.d/50-test-watchdog.conf"
# Oneshot units made of reachd.service's [Service] section, to run other programs under exactly
# its sandbox (user, MemoryDenyWriteExecute=, SystemCallFilter=, RestrictAddressFamilies=, …).
sandboxed_unit() { # name, command line
  awk -v exec="ExecStart=$2" '
    /^\[Install\]/ { exit }
    /^(Requires|After|ExecReload|Restart|RestartSec|WatchdogSec|NotifyAccess)=/ { next }
    /^Type=/ { print "Type=oneshot"; next }
    /^ExecStart=/ { print exec; next }
    { print }' systemd/reachd.service > "$upper/etc/systemd/system/$1.service"
}
# The Swift runtime (Foundation, Dispatch, sockets, files): the package's test binary, copied into
# the container (the build directory may be where the sandbox cannot see, e.g. under /tmp).
mkdir -p "$upper/usr/local/libexec/reachd-tests"
cp "$tests_bin" "$upper/usr/local/libexec/reachd-tests/reachdPackageTests.xctest"
sandboxed_unit reachd-sandbox-swift "/usr/local/libexec/reachd-tests/reachdPackageTests.xctest --testing-library swift-testing --filter INIParserTests --filter ConfigurationFilesTests --filter SystemdSocketActivationTests"
# The system bus (ModemManager is asked there): dbus-daemon must accept the service's user.
sandboxed_unit reachd-sandbox-dbus "/usr/bin/busctl --system call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus GetConnectionUnixUser s org.freedesktop.DBus"
# Its own machine id, so its journal is its own.
mkdir -p "$upper/etc" && systemd-id128 new > "$upper/etc/machine-id"

# --- Boot.
container_boot

inside systemctl daemon-reload

# What a package's postinst does: create the system user of sysusers.d/reachd.conf.
inside systemd-sysusers >/dev/null
reachd_uid=$(inside id -u reachd) || fail "systemd-sysusers did not create user reachd"

# --- 0. The sandbox lets Swift and D-Bus work.
if timeout 120 nsenter -t "$leader" -a systemctl start reachd-sandbox-swift.service &&
   inside journalctl -u reachd-sandbox-swift.service --no-pager -o cat | grep -Eq "Test run with [1-9][0-9]* tests.* passed"; then
  log "Swift tests pass under reachd.service's sandbox (MemoryDenyWriteExecute, SystemCallFilter, ProtectProc)"
else
  fail "the Swift tests fail under reachd.service's sandbox:"
  inside journalctl -u reachd-sandbox-swift.service --no-pager -o cat | tail -20 >&2
fi
if timeout 30 nsenter -t "$leader" -a systemctl start reachd-sandbox-dbus.service; then
  log "the system bus answers reachd.service's user"
else
  fail "the system bus refuses reachd.service's user:"
  inside journalctl -u reachd-sandbox-dbus.service --no-pager -o cat | tail -5 >&2
fi

# --- 1. The service starts and reports ready.
inside systemctl start reachd.socket
[ "$(inside systemctl is-active reachd.socket)" = active ] || fail "reachd.socket is not active"
[ "$(inside systemctl is-active reachd.service || true)" = inactive ] || fail "reachd.service runs before anyone asked"
if timeout 60 nsenter -t "$leader" -a systemctl start reachd.service; then
  log "reachd.service: $(inside systemctl is-active reachd.service)"
else
  fail "systemctl start reachd.service failed (no READY=1 within 20 s? reachd must call SystemdNotifier.ready())"
fi
pid=$(inside systemctl show -p MainPID --value reachd.service)
uid=$(inside awk '/^Uid:/ { print $2 }' /proc/"$pid"/status 2>/dev/null || echo "?")
[ "$uid" = "$reachd_uid" ] || fail "reachd runs as uid $uid (expected user reachd, $reachd_uid)"

# --- 2. STATUS= reaches systemd, and follows the network.
status_text() { inside systemctl show -p StatusText --value reachd.service; }
text=$(status_text)
log "StatusText: '$text'"
[ "$text" = "not reachable" ] || fail "StatusText is '$text', expected 'not reachable' (no network in the container)"
inside ip link add rch0 type veth peer name rch0p
inside ip link set rch0p up
inside ip link set rch0 up
inside ip addr add 10.231.0.2/24 dev rch0
inside ip route add default via 10.231.0.1 dev rch0
status_is() { [ "$(status_text)" = "$1" ]; }
wait_for 10 "StatusText 'ethernet via rch0, internet not checked' (is '$(status_text)')" \
  status_is "ethernet via rch0, internet not checked" && log "StatusText: '$(status_text)'"
inside ip link del rch0
wait_for 10 "StatusText back to 'not reachable'" status_is "not reachable" || true

# --- 3. An unprivileged user asks through the socket.
if out=$(as_user "${reachctl[@]}" 2>&1); then
  log "reachctl status as nobody: $out"
else
  fail "reachctl status as nobody failed: $out"
fi

# --- 4. Socket activation.
inside systemctl stop reachd.service 2>/dev/null   # "can still be activated by reachd.socket": yes
[ "$(inside systemctl is-active reachd.service || true)" = inactive ] || fail "reachd.service did not stop"
[ "$(inside systemctl is-active reachd.socket)" = active ] || fail "stopping the service stopped the socket"
inside test -S /run/reachd/io.reachd.Reachability || fail "the socket file went with the service"
if out=$(as_user "${reachctl[@]}" 2>&1); then
  log "first connection with the service stopped: $out"
else
  fail "reachctl status with the service stopped (socket activation) failed: $out"
fi
[ "$(inside systemctl is-active reachd.service || true)" = active ] || fail "socket activation did not start reachd.service"

# --- 5. Reload with a broken configuration, then a good one.
pid=$(inside systemctl show -p MainPID --value reachd.service)
inside sh -c 'printf "[Events]\nHistory=lots\n" > /etc/reachd/reachd.conf.d/90-broken.conf'
# Each reload is judged once the daemon has answered it in the journal, not after a pause.
reloaded_count() { inside journalctl -u reachd.service --no-pager -o cat | grep -c 'configuration reloaded' || true; }
reloads=$(reloaded_count)
inside systemctl reload reachd.service || fail "systemctl reload (broken config) failed"
wait_for 10 "the journal naming the broken file" \
  sh -c "nsenter -t $leader -a journalctl -u reachd.service --no-pager | grep -q '90-broken.conf:2'"
[ "$(inside systemctl is-active reachd.service || true)" = active ] || fail "a broken config on reload stopped reachd"
[ "$(inside systemctl show -p MainPID --value reachd.service)" = "$pid" ] || fail "a broken config on reload restarted reachd"
inside rm /etc/reachd/reachd.conf.d/90-broken.conf
inside systemctl reload reachd.service || fail "systemctl reload (good config) failed"
reloaded_more() { [ "$(reloaded_count)" -gt "$reloads" ]; }
wait_for 10 "reachd logging 'configuration reloaded'" reloaded_more
[ "$(inside systemctl is-active reachd.service || true)" = active ] || fail "reload stopped reachd"
[ "$(inside systemctl show -p MainPID --value reachd.service)" = "$pid" ] || fail "a good reload restarted reachd"
as_user "${reachctl[@]}" >/dev/null 2>&1 || fail "reachctl status after reload failed"

# --- 5b. A broken configuration at start: the service fails (78, EX_CONFIG) and is not restarted.
inside sh -c 'printf "[Monitor]\nDebounce=soon\n" > /etc/reachd/reachd.conf.d/90-broken.conf'
if timeout 60 nsenter -t "$leader" -a systemctl restart reachd.service 2>/dev/null; then
  fail "reachd started with a broken configuration"
fi
# systemd decided at the exit: "failed", not "auto-restart" (a restart waiting for RestartSec=).
substate=$(inside systemctl show -p SubState --value reachd.service)
[ "$substate" = failed ] || fail "after exit 78 reachd.service is '$substate', expected 'failed' (no restart scheduled)"
[ "$(inside systemctl show -p ExecMainStatus --value reachd.service)" = 78 ] ||
  fail "a broken configuration at start exited $(inside systemctl show -p ExecMainStatus --value reachd.service), expected 78"
[ "$(inside systemctl show -p NRestarts --value reachd.service)" = 0 ] || fail "a broken configuration was restarted"
inside rm /etc/reachd/reachd.conf.d/90-broken.conf
inside systemctl reset-failed reachd.service
timeout 60 nsenter -t "$leader" -a systemctl start reachd.service || fail "reachd did not start with the configuration fixed"

# --- 6. No watchdog kill, no restart, nothing refused by the sandbox.
[ "$(inside systemctl show -p WatchdogUSec --value reachd.service)" = 2s ] || fail "the test watchdog drop-in is not in effect"
# systemd's own record of the pings: the last one more than a watchdog period (2 s) after the
# start, so a period has passed in which a missing ping would have killed it.
pid=$(inside systemctl show -p MainPID --value reachd.service)
pinged_for_a_period() {
  local started last
  started=$(inside systemctl show -p ExecMainStartTimestampMonotonic --value reachd.service)
  last=$(inside systemctl show -p WatchdogTimestampMonotonic --value reachd.service)
  [ -n "$started" ] && [ -n "$last" ] && [ "$last" -gt $((started + 2500000)) ]
}
wait_for 20 "a watchdog ping more than 2.5 s after the start" pinged_for_a_period
[ "$(inside systemctl is-active reachd.service || true)" = active ] || fail "reachd.service is no longer active"
[ "$(inside systemctl show -p MainPID --value reachd.service)" = "$pid" ] || fail "reachd.service was restarted (watchdog or crash)"
[ "$(inside systemctl show -p NRestarts --value reachd.service)" = 0 ] || fail "reachd.service restarted (watchdog or crash)"
journal=$(inside journalctl -u reachd.service -u reachd.socket --no-pager -o cat 2>&1 || true)
if grep -Eiq "watchdog timeout|SIGSYS|Bad system call|core-dump|Failed with result '(watchdog|signal|core-dump|timeout)'" <<<"$journal"; then
  fail "the journal shows trouble"
fi

# --- 7. Callers as the kernel names them, under the unit's own user mapping: two users, two
# per-user buckets; a member of [Simulation] Group= may simulate. (A user namespace of the unit,
# PrivateUsers=yes, shows every caller but root as nobody: one bucket, and no group member.)
inside groupadd --system reachd-sim
inside useradd --system --no-create-home --gid nogroup --groups reachd-sim reachd-simuser
inside useradd --system --no-create-home --gid nogroup reachd-other
inside sh -c 'printf "[Limits]\nMaxConnectionsPerUser=2\n[Simulation]\nGroup=reachd-sim\n" > /etc/reachd/reachd.conf.d/60-users.conf'
timeout 60 nsenter -t "$leader" -a systemctl restart reachd.service || fail "reachd did not restart with MaxConnectionsPerUser=2"
as_named() { local user=$1; shift; inside setpriv --reuid="$user" --regid=nogroup --init-groups "$@"; }
# nobody takes both of its connections and keeps them.
inside setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 -c '
import os, socket, time
held = []
for _ in range(2):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect("/run/reachd/io.reachd.Reachability")
    s.sendall(b"{\"method\":\"org.varlink.service.GetInfo\"}\0")
    s.recv(65536)
    held.append(s)
print("holding", os.getpid(), flush=True)
time.sleep(60)' > "$work/holder.out" 2>&1 &
holder=$!
wait_for 20 "nobody holding two connections" grep -q holding "$work/holder.out" || cat "$work/holder.out" >&2
if out=$(as_user "${reachctl[@]}" 2>&1); then
  fail "a third connection of nobody was accepted under MaxConnectionsPerUser=2: $out"
else
  log "nobody's third connection refused: $out"
fi
if out=$(as_named reachd-other "${reachctl[@]}" 2>&1); then
  log "another user is not locked out by nobody's connections: $out"
else
  fail "user reachd-other shares nobody's connection bucket (uids collapsed?): $out"
fi
if out=$(as_named reachd-simuser /usr/local/bin/reachctl simulate wwan2G --for 30 2>&1); then
  log "a member of [Simulation] Group= simulates: $out"
else
  fail "a member of [Simulation] Group= was refused: $out"
fi
code=0; out=$(as_named reachd-other /usr/local/bin/reachctl simulate wwan3G --for 30 2>&1) || code=$?
[ "$code" = 77 ] || fail "a user outside [Simulation] Group= got exit $code, expected 77 (permission denied): $out"
as_named reachd-simuser /usr/local/bin/reachctl simulate --reset >/dev/null 2>&1 || fail "reachctl simulate --reset by the group member failed"
inside kill "$(awk '/holding/ { print $2 }' "$work/holder.out")" 2>/dev/null || true
wait "$holder" 2>/dev/null || true
journal=$(inside journalctl -u reachd.service -u reachd.socket --no-pager -o cat 2>&1 || true)

if [ $failures -gt 0 ]; then
  echo "--- journal of reachd in the container:" >&2
  printf '%s\n' "$journal" | tail -40 >&2
  exit 1
fi
log "reachd under systemd as PID 1: ok"
