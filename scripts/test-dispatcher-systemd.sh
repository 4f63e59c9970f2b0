#!/usr/bin/env bash
# reachd-dispatcher under systemd as PID 1 (part of `make check-systemd`): boots systemd in a
# container (scripts/container.sh), installs reachd with `make install`, gives it an uplink (a
# veth whose peer is in a network namespace of the container, with a connectivity check server
# there that answers 204 or, when told, a captive portal's redirect), and checks that
#   1. reachd-dispatcher.service runs (as root, under its hardening) and follows reachd;
#   2. a unit started after reachd-wait-online.service runs only once the internet answers;
#   3. a unit PartOf=reachd-internet.target (WantedBy= it) starts when the uplink and the check
#      give "full", does not stop for a carrier flap shorter than HoldSec=, stops when the
#      server turns portal, starts again when it answers again, and stops when the carrier goes;
#      with python-dbusmock's logind template in place of systemd-logind, it stops at once
#      before a sleep (reachd's delay inhibitor released) and starts after the wake's fresh
#      check (the inhibitor taken again);
#   4. the dispatcher scripts ran in order with exactly the documented environment, each run
#      starting from the state the previous one ended in, also across a restart of the dispatcher
#      with events missed; a world-writable script was refused; a script that hangs was killed
#      with its process group and the next event ran; an interface named with ESC and BEL
#      reached no script raw;
#   5. restarting reachd or the dispatcher with nothing changed runs no script again.
# Needs root: without it, it says SKIPPED and exits 0 (as test-systemd.sh does). About 45 s.
set -euo pipefail
cd "$(dirname "$0")/.."

check=check-dispatcher
source scripts/container.sh

bin_dir=${REACHD_BIN_DIR:-$(swift build --show-bin-path)}
for b in reachd reachctl reachd-dispatcher; do
  [ -x "$bin_dir/$b" ] || { echo "$check: no $b in $bin_dir (build first)" >&2; exit 1; }
done

# --- The container's files.
make -s install DESTDIR="$upper" PREFIX=/usr/local BIN_DIR="$bin_dir" >/dev/null
# python-dbusmock (in .venv, over the system's python3-dbus) stands in for logind below. The
# container's systemd mounts its own /tmp, where a checkout may live, so the package is copied
# into the container's tree rather than run from the checkout.
dbusmock_dir=$("$PWD/.venv/bin/python" -c 'import dbus, dbusmock, os; print(os.path.dirname(dbusmock.__file__))' 2>/dev/null) ||
  { fail "python-dbusmock missing in .venv: run scripts/deps.sh"; exit 1; }
mkdir -p "$upper/usr/local/lib/reachd-test/python"
cp -r "$dbusmock_dir" "$upper/usr/local/lib/reachd-test/python/"
mkdir -p "$upper/etc/reachd/reachd.conf.d" "$upper/etc/reachd/dispatcher.conf.d" "$upper/etc/systemd/system" \
         "$upper/usr/local/libexec" "$upper/var/lib/dispatch-test/runs"
# The check goes to the server in the container's own uplink namespace, every second.
printf '[Connectivity]\nEnabled=yes\nURL=http://10.231.0.1:8080/generate_204\nInterval=1\nTimeout=1\n[Cellular]\nModemManager=no\n' \
  > "$upper/etc/reachd/reachd.conf.d/50-test.conf"
hold=3
printf '[Targets]\nHoldSec=%s\n[Scripts]\nTimeout=2\n' $hold > "$upper/etc/reachd/dispatcher.conf.d/50-test.conf"
cat > "$upper/usr/local/libexec/check-server.py" <<'PY'
import http.server, sys
mode_file = sys.argv[2]
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open(mode_file) as f:
            mode = f.read().strip()
        if mode == "portal":
            self.send_response(302)
            self.send_header("Location", "http://10.231.0.1:8080/login")
            self.send_header("Content-Length", "0")
        else:
            self.send_response(204)
        self.end_headers()
    def log_message(self, *args):
        pass
http.server.HTTPServer(("10.231.0.1", int(sys.argv[1])), Handler).serve_forever()
PY
# A script that records each run: its exact environment and its stdin.
cat > "$upper/etc/reachd/dispatcher.d/10-record" <<'SH'
#!/bin/sh
dir=/var/lib/dispatch-test
n=$(( $(cat $dir/count 2>/dev/null || echo 0) + 1 ))
echo $n > $dir/count
out=$dir/runs/$(printf %05d $n)
tr '\0' '\n' < /proc/$$/environ > "$out.env.part"
cat > "$out.json.part"
# Renamed into place once whole; a run is listed by its .env, which comes last.
mv "$out.json.part" "$out.json"
mv "$out.env.part" "$out.env"
SH
chmod 0755 "$upper/etc/reachd/dispatcher.d/10-record"
# A script that hangs (and ignores SIGTERM) once, when /run/hang-once exists.
cat > "$upper/etc/reachd/dispatcher.d/30-hang" <<'SH'
#!/bin/sh
if [ -e /run/hang-once ]; then
  rm -f /run/hang-once
  touch /var/lib/dispatch-test/hung
  trap '' TERM
  sleep 61.75 &
  sleep 61.75
fi
SH
chmod 0755 "$upper/etc/reachd/dispatcher.d/30-hang"
printf '#!/bin/sh\ntouch /var/lib/dispatch-test/world-writable-ran\n' > "$upper/etc/reachd/dispatcher.d/20-world-writable"
chmod 0777 "$upper/etc/reachd/dispatcher.d/20-world-writable"
# A user's unit that runs only while the internet answers.
cat > "$upper/etc/systemd/system/needs-internet.service" <<'UNIT'
[Unit]
Description=Runs only while the internet answers
PartOf=reachd-internet.target
After=reachd-internet.target
[Service]
ExecStart=/bin/sleep infinity
[Install]
WantedBy=reachd-internet.target
UNIT
# A unit that must start after the internet answers: it writes down what reachctl said then.
cat > "$upper/etc/systemd/system/after-internet.service" <<'UNIT'
[Unit]
Description=Starts after the internet answers
Wants=reachd-wait-online.service
After=reachd-wait-online.service
[Service]
Type=oneshot
ExecStart=/bin/sh -c '/usr/local/bin/reachctl status > /var/lib/dispatch-test/after-internet'
UNIT
mkdir -p "$upper/etc/systemd/system/reachd-wait-online.service.d"
printf '[Service]\nEnvironment=REACHD_WAIT_STABLE=1 REACHD_WAIT_TIMEOUT=120\n' > "$upper/etc/systemd/system/reachd-wait-online.service.d/50-test.conf"
mkdir -p "$upper/etc" && systemd-id128 new > "$upper/etc/machine-id"

# --- Boot.
container_boot
inside systemctl daemon-reload
inside systemd-sysusers >/dev/null
inside systemctl enable needs-internet.service >/dev/null 2>&1 || fail "systemctl enable needs-internet.service failed"
inside systemctl start reachd.socket

# --- 1. The dispatcher runs as root and follows reachd (which the socket starts).
timeout 30 nsenter -t "$leader" -a systemctl start reachd-dispatcher.service || fail "reachd-dispatcher.service did not start"
pid=$(inside systemctl show -p MainPID --value reachd-dispatcher.service)
[ "$(inside awk '/^Uid:/ { print $2 }' /proc/"$pid"/status 2>/dev/null)" = 0 ] || fail "reachd-dispatcher does not run as root"
runs() { inside sh -c 'ls /var/lib/dispatch-test/runs/ 2>/dev/null | grep -c "\.env$"' || true; }
has_runs() { [ "$(runs)" -ge "$1" ]; }
wait_for 20 "the first script run (initial)" has_runs 1
active() { [ "$(inside systemctl is-active "$1" 2>/dev/null || true)" = active ]; }
# The dispatcher's journal, read whole (a `journalctl | grep -q` pipeline fails under pipefail
# when grep stops reading early).
dispatcher_journal() { inside journalctl -u reachd-dispatcher.service --no-pager -o cat 2>&1 || true; }
journal_has() { grep -q -- "$1" <<<"$(dispatcher_journal)"; }
inactive() { ! active "$1"; }
# Before any network: not online; reachd-wait-online holds after-internet back.
inside systemctl start --no-block after-internet.service
sleep 1
active after-internet.service && fail "after-internet.service ran before the internet answered"
inactive reachd-internet.target || fail "reachd-internet.target is active without a network"

# --- 2./3. An uplink with a check server: the internet answers.
inside ip netns add up
inside sh -c 'echo 204 > /run/check-mode'
inside ip link add rch0 type veth peer name rch0p netns up
inside ip -n up addr add 10.231.0.1/24 dev rch0p
inside ip -n up link set rch0p up
inside ip -n up link set lo up
inside systemd-run --quiet --unit check-server ip netns exec up /usr/bin/python3 /usr/local/libexec/check-server.py 8080 /run/check-mode
inside ip addr add 10.231.0.2/24 dev rch0
inside ip link set rch0 up
inside ip route add default via 10.231.0.1 dev rch0
wait_for 30 "reachd-internet.target active" active reachd-internet.target && log "reachd-internet.target: active"
wait_for 10 "needs-internet.service (PartOf= reachd-internet.target) active" active needs-internet.service
wait_for 30 "after-internet.service to have run" inside test -s /var/lib/dispatch-test/after-internet
after=$(inside cat /var/lib/dispatch-test/after-internet 2>/dev/null || true)
[[ $after == *"internet: full"* ]] || fail "after-internet.service ran before the internet answered: '$after'"
log "after-internet.service saw: $after"
active reachd-online.target || fail "reachd-online.target is not active"
active reachd-unmetered.target || fail "reachd-unmetered.target is not active"

# A carrier flap shorter than HoldSec=: nothing stops, nothing restarts.
invocation=$(inside systemctl show -p InvocationID --value needs-internet.service)
inside ip -n up link set rch0p down
sleep 0.5
inside ip -n up link set rch0p up
sleep $((hold + 2))
active needs-internet.service || fail "needs-internet.service stopped for a flap shorter than HoldSec=$hold"
[ "$(inside systemctl show -p InvocationID --value needs-internet.service)" = "$invocation" ] ||
  fail "needs-internet.service was restarted by a flap shorter than HoldSec=$hold"

# The server turns into a captive portal: the target and the unit stop.
inside sh -c 'echo portal > /run/check-mode'
wait_for 20 "reachd-internet.target inactive behind the portal" inactive reachd-internet.target && log "portal: reachd-internet.target stopped"
wait_for 10 "needs-internet.service stopped with its target" inactive needs-internet.service
active reachd-online.target || fail "reachd-online.target stopped behind a portal (it is still reachable)"
# Logged in: back again.
inside sh -c 'echo 204 > /run/check-mode'
wait_for 20 "reachd-internet.target active again" active reachd-internet.target
wait_for 10 "needs-internet.service active again" active needs-internet.service

# Sleep and wake: python-dbusmock's logind template stands in for systemd-logind on the
# container's system bus and announces them. reachd holds a delay inhibitor while awake; before
# sleep reachd-internet.target and the unit PartOf= it stop at once (no HoldSec=) and reachd's
# inhibitor goes; after wake they start again once the fresh check says full, and the
# inhibitor is taken again.
inside systemctl stop systemd-logind.service >/dev/null 2>&1 || true
inside systemctl mask --runtime systemd-logind.service >/dev/null 2>&1 || true
inside systemd-run --quiet --unit logind-mock --setenv=PYTHONPATH=/usr/local/lib/reachd-test/python \
  /usr/bin/python3 -m dbusmock --system --template logind
wait_for 20 "the stand-in logind on the system bus" inside busctl status org.freedesktop.login1
login1() { inside busctl call org.freedesktop.login1 /org/freedesktop/login1 "$@"; }
reachd_inhibits() { [[ $(login1 org.freedesktop.login1.Manager ListInhibitors 2>/dev/null) == *'"sleep" "reachd"'*'"delay"'* ]]; }
reachd_released() { ! reachd_inhibits; }
reachd_journal() { inside journalctl -u reachd.service --no-pager -o cat 2>&1 || true; }
reachd_logged() { grep -q -- "$1" <<<"$(reachd_journal)"; }
wait_for 20 "reachd to hold a delay inhibitor" reachd_inhibits && log "reachd holds a delay inhibitor"
login1 org.freedesktop.DBus.Mock EmitSignal sssav org.freedesktop.login1.Manager PrepareForSleep b 1 b true ||
  fail "EmitSignal PrepareForSleep(true) failed"
wait_for 10 "reachd's event sleeping" reachd_logged ' sleeping: '
wait_for 10 "reachd to release its inhibitor before sleep" reachd_released
wait_for 10 "reachd-internet.target inactive before sleep" inactive reachd-internet.target && log "before sleep: reachd-internet.target stopped"
wait_for 10 "needs-internet.service stopped before sleep" inactive needs-internet.service
active reachd-online.target || fail "reachd-online.target stopped before sleep (only the internet's verdict is unknown)"
login1 org.freedesktop.DBus.Mock EmitSignal sssav org.freedesktop.login1.Manager PrepareForSleep b 1 b false ||
  fail "EmitSignal PrepareForSleep(false) failed"
wait_for 10 "reachd's event resumed" reachd_logged ' resumed: '
wait_for 20 "reachd-internet.target active after wake" active reachd-internet.target && log "after wake: reachd-internet.target started"
wait_for 10 "needs-internet.service active after wake" active needs-internet.service
wait_for 10 "reachd to take its inhibitor again" reachd_inhibits
# The carrier goes for good.
inside ip -n up link set rch0p down
wait_for 20 "reachd-online.target inactive without carrier" inactive reachd-online.target && log "carrier gone: reachd-online.target stopped"
wait_for 10 "needs-internet.service stopped without carrier" inactive needs-internet.service
inactive reachd-internet.target || fail "reachd-internet.target still active without carrier"

# A script that hangs is killed with its process group after Timeout= (2 s, SIGKILL 2 s later);
# the event that came meanwhile runs next. An interface whose name holds ESC and BEL appears.
inside touch /run/hang-once
escaped_name=$(printf 'e\033x\007y')
inside ip link add "$escaped_name" type veth peer name rchq0
wait_for 10 "30-hang to hang" inside test -e /var/lib/dispatch-test/hung
hung_runs=$(runs)
inside ip link del rchq0
more_runs() { [ "$(runs)" -gt "$hung_runs" ]; }
wait_for 20 "the event after the hanging script to run" more_runs
journal_has '30-hang: #.*killed after Timeout=2s' ||
  fail "no log line saying 30-hang was killed after Timeout=2s"
[ -z "$(inside pgrep -f 'sleep 61[.]75' || true)" ] || fail "the hanging script's process group survived"
# No script saw a raw control byte (environment: one variable a line; stdin: JSON), and the
# journal has none either.
if inside sh -c 'cat /var/lib/dispatch-test/runs/*.env /var/lib/dispatch-test/runs/*.json | tr -d "\n" | LC_ALL=C grep -q "[[:cntrl:]]"'; then
  fail "a script got a raw control byte"
fi
grep -qiF 'e\u001bx\u0007y' <<<"$(inside sh -c 'cat /var/lib/dispatch-test/runs/*.json')" || fail "no script saw the interface named with ESC and BEL"
if LC_ALL=C grep -q "$(printf '\033')" <<<"$(dispatcher_journal)"; then
  fail "the dispatcher's journal has a raw ESC"
fi

# The dispatcher stops, the network changes, it starts again: it resumes after its last run.
inside systemctl stop reachd-dispatcher.service
inside ip -n up link set rch0p up
wait_for 20 "reachd to see the carrier back" sh -c "nsenter -t $leader -a /usr/local/bin/reachctl status | grep -q online"
inside systemctl start reachd-dispatcher.service
online_seen() { inside sh -c 'f=$(ls /var/lib/dispatch-test/runs/*.env | tail -1); grep -qx REACHD_REACHABLE=yes "$f"'; }
wait_for 20 "the restarted dispatcher to run the scripts for what it missed" online_seen
inside ip -n up link set rch0p down

# --- 4. The scripts: in order, exactly the documented environment, the refused one never ran;
# each run starts from the state the previous one ended in (nothing lost, nothing run twice).
documented="LANG PATH REACHD_CHANGES REACHD_COALESCED REACHD_CONNECTIVITY REACHD_EFFECTIVE_TYPE REACHD_EVENT REACHD_EXPENSIVE REACHD_GENERATION REACHD_INTERFACE REACHD_INTERFACE_KIND REACHD_LINK_QUALITY REACHD_PORTAL_URL REACHD_PREVIOUS_CONNECTIVITY REACHD_PREVIOUS_INTERFACE REACHD_PREVIOUS_REACHABLE REACHD_PREVIOUS_STATUS REACHD_REACHABLE REACHD_REASON REACHD_REASON_INTERFACE REACHD_SCRIPT REACHD_SEQUENCE REACHD_SIMULATED REACHD_STALL REACHD_STATUS REACHD_VPN REACHD_WIFI_BAND REACHD_WIFI_BARS REACHD_WIFI_BSSID REACHD_WIFI_SIGNAL_DBM REACHD_WIFI_SSID"
caught_up() { # the last run saw what reachd reports now (not reachable)
  inside sh -c 'f=$(ls /var/lib/dispatch-test/runs/*.env | tail -1); grep -qx REACHD_REACHABLE=no "$f"'
}
wait_for 20 "the scripts to see the carrier gone" caught_up
previous_sequence=0
previous_state="|||"
portal_seen=no
for env in $(inside sh -c 'ls /var/lib/dispatch-test/runs/*.env'); do
  names=$(inside sh -c "cut -d= -f1 '$env' | sort | tr '\n' ' '")
  [ "$names" = "$documented " ] || fail "$(basename "$env"): environment is not the documented one: $names"
  sequence=$(inside sed -n 's/^REACHD_SEQUENCE=//p' "$env")
  [ "$sequence" -gt "$previous_sequence" ] || fail "$(basename "$env"): sequence $sequence after $previous_sequence"
  previous_sequence=$sequence
  state=$(inside sh -c "grep -E '^REACHD_(STATUS|CONNECTIVITY|INTERFACE|REACHABLE)=' '$env' | sort | cut -d= -f2- | tr '\n' '|'")
  was=$(inside sh -c "grep -E '^REACHD_PREVIOUS_(STATUS|CONNECTIVITY|INTERFACE|REACHABLE)=' '$env' | sort | cut -d= -f2- | tr '\n' '|'")
  if [ "$previous_state" != "|||" ] && [ "$was" != "$previous_state" ]; then
    fail "$(basename "$env") starts from '$was', the run before ended in '$previous_state'"
  fi
  previous_state=$state
  json_sequence=$(inside sh -c "sed -n 's/.*\"sequence\":\([0-9]*\).*/\1/p' '${env%.env}.json'")
  [ "$json_sequence" = "$sequence" ] || fail "$(basename "$env"): REACHD_SEQUENCE $sequence, stdin says $json_sequence"
  if inside grep -qx REACHD_CONNECTIVITY=portal "$env"; then
    portal_seen=yes
    inside grep -qx 'REACHD_PORTAL_URL=http://10.231.0.1:8080/login' "$env" || fail "$(basename "$env"): no REACHD_PORTAL_URL behind the portal"
  fi
done
[ $portal_seen = yes ] || fail "no script run saw the portal"
inside test ! -e /var/lib/dispatch-test/world-writable-ran || fail "the world-writable script ran"
journal_has 'refusing to run /etc/reachd/dispatcher.d/20-world-writable: writable by group (mode 0777)' ||
  fail "no log line refusing the world-writable script"
log "$(runs) script runs, in order, with the documented environment"

# --- 5. Restarts with nothing changed run nothing again.
before=$(runs)
inside systemctl restart reachd.service || fail "systemctl restart reachd.service failed"
inside systemctl restart reachd-dispatcher.service || fail "systemctl restart reachd-dispatcher.service failed"
sleep 3
[ "$(runs)" = "$before" ] || fail "restarting reachd and the dispatcher with nothing changed ran scripts again ($before, then $(runs))"
journal_has 'resuming after event #' ||
  fail "the restarted dispatcher did not resume from its progress file"

journal=$(dispatcher_journal)
if grep -Eiq "SIGSYS|Bad system call|core-dump|Failed with result" <<<"$journal"; then
  fail "the dispatcher's journal shows trouble"
fi
if [ $failures -gt 0 ]; then
  echo "--- journal of reachd-dispatcher in the container:" >&2
  printf '%s\n' "$journal" | tail -40 >&2
  exit 1
fi
log "reachd-dispatcher under systemd as PID 1: ok"
