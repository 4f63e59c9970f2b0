#!/usr/bin/env bash
# The Debian package under systemd as PID 1, on a machine without Swift (`make check-deb`):
# boots systemd in a container (systemd-nspawn over an overlay of `/`, inside a private mount
# namespace, with a private network and an empty tmpfs over the Swift toolchain) and checks that
#   1. `apt-get install ./reachd_*.deb` (offline) enables and starts reachd.socket and
#      reachd.service, reachd runs as user reachd from /usr/bin/reachd;
#   2. `reachctl status` answers an unprivileged user through /run/reachd/io.reachd.Reachability;
#   3. a change to /etc/reachd/reachd.conf plus `systemctl reload reachd` applies, same PID
#      (IgnoreInterfaces= makes a veth with an address and a default route disappear);
#   4. upgrading to the same build with a higher Debian revision keeps the edited conffile
#      and restarts the daemon (a new MainPID, which still ignores the veth);
#   5. `apt-get remove` stops both units and removes the binaries, but keeps the configuration;
#   6. `apt-get purge` leaves nothing behind: no file named reachd anywhere, nothing of it in
#      dpkg's or deb-systemd-helper's state, and of the files the container changed since the
#      install only dpkg's and apt's books and the system user (which Debian packages keep).
#   test-deb.sh DEB RELEASE_BIN_DIR   (the second package is built from RELEASE_BIN_DIR)
# Needs root: without it, it says SKIPPED and exits 0; as root a missing tool fails and
# REACHD_SKIP_SYSTEMD_TEST=1 is refused in CI (scripts/container.sh). About a minute.
set -euo pipefail
cd "$(dirname "$0")/.."
deb=${1:?usage: test-deb.sh DEB RELEASE_BIN_DIR} bin_dir=${2:?usage: test-deb.sh DEB RELEASE_BIN_DIR}

check=check-deb
source scripts/container.sh
[ -f "$deb" ] || { echo "check-deb: $deb is missing (make deb)" >&2; exit 1; }
# Offline: the container has no network, and every dependency is installed on the host already.
# (Not --no-download: apt 2.6 then refuses a local .deb, "Pathname to install is not absolute".)
apt_get() { inside env DEBIAN_FRONTEND=noninteractive apt-get -y -q "$@" </dev/null; }

# --- The packages: the one to test, and the same build one Debian revision higher.
version=$(dpkg-deb --field "$deb" Version)
revision=${version##*-}
[[ $revision =~ ^[0-9]+$ ]] || { echo "check-deb: $deb: version $version has no numeric Debian revision" >&2; exit 1; }
mkdir -p "$upper/root/debs"
cp "$deb" "$upper/root/debs/"
# (Compressed fast: the upgrade is under test here, not the archive.)
DPKG_DEB_COMPRESSOR_TYPE=gzip DPKG_DEB_COMPRESSOR_LEVEL=1 \
  DEB_REVISION=$((revision + 1)) DEB_OUT_DIR="$upper/root/debs" DEB_LINTIAN=no scripts/build-deb.sh "$bin_dir" >/dev/null
deb1=/root/debs/$(basename "$deb")
deb2=/$(cd "$upper" && ls root/debs/reachd_*-$((revision + 1))_*.deb)
log "packages: $(basename "$deb1") and $(basename "$deb2")"

# --- No Swift in the container: an empty tmpfs over the toolchain that built the binaries.
swift_bin=$(readlink -f "$(command -v swift 2>/dev/null || echo /nonexistent)")
toolchain=$(cd "$(dirname "$swift_bin")/../.." 2>/dev/null && pwd || true)
hide=()
if [ -n "$toolchain" ] && [ "$toolchain" != / ] && [ "$toolchain" != /usr ] && [ -d "$toolchain" ]; then
  hide=(--tmpfs="$toolchain")
fi

# Never any outside traffic (the container has no network anyway), and no ModemManager.
mkdir -p "$upper/etc/reachd/reachd.conf.d"
printf '[Connectivity]\nEnabled=no\n[Cellular]\nModemManager=no\n' > "$upper/etc/reachd/reachd.conf.d/50-test.conf"
mkdir -p "$upper/etc" && systemd-id128 new > "$upper/etc/machine-id"
# A container image's policy-rc.d (exit 101: "start no services") would keep the maintainer
# scripts from starting anything; a machine has none. An overlay whiteout removes it.
if [ -e /usr/sbin/policy-rc.d ]; then
  mkdir -p "$upper/usr/sbin" && mknod "$upper/usr/sbin/policy-rc.d" c 0 0
  log "the host's /usr/sbin/policy-rc.d is removed in the container"
fi

# --- Boot.
container_boot "${hide[@]}"
if [ ${#hide[@]} -gt 0 ]; then
  [ -z "$(inside ls -A "$toolchain")" ] || fail "the Swift toolchain is visible in the container"
  log "Swift toolchain hidden in the container: $toolchain is empty"
fi

# What the container holds before the package, to compare with after the purge.
# Where a package puts things (/run is a tmpfs, not in the overlay's upper layer).
named_reachd() { inside find /etc /lib /usr /var /run /srv /opt -name '*reachd*' 2>/dev/null | sort; }
before_names=$(named_reachd)
snapshot() { (cd "$upper" && find . -path ./root/debs -prune -o \( -type f -o -type l -o -type c \) -print | sort); }
before_files=$(snapshot)

# --- 1. Install.
if out=$(apt_get install "$deb1" 2>&1); then
  log "apt-get install $(basename "$deb1"): ok"
else
  fail "apt-get install failed: $out"
fi
for unit in reachd.socket reachd.service reachd-dispatcher.service; do
  [ "$(inside systemctl is-enabled $unit || true)" = enabled ] || fail "$unit is not enabled after install"
  wait_for 20 "$unit active" sh -c "[ \"\$(nsenter -t $leader -a systemctl is-active $unit)\" = active ]" || true
done
log "after install: reachd.socket $(inside systemctl is-active reachd.socket || true)," \
    "reachd.service $(inside systemctl is-active reachd.service || true)"
pid1=$(inside systemctl show -p MainPID --value reachd.service)
exe=$(inside readlink /proc/"$pid1"/exe || true)
[ "$exe" = /usr/bin/reachd ] || fail "reachd.service runs '$exe', expected /usr/bin/reachd"
uid=$(inside awk '/^Uid:/ { print $2 }' /proc/"$pid1"/status 2>/dev/null || echo "?")
[ "$uid" = "$(inside id -u reachd 2>/dev/null || echo none)" ] || fail "reachd runs as uid $uid, not as user reachd"
inside test -f /usr/lib/sysusers.d/reachd.conf || fail "no /usr/lib/sysusers.d/reachd.conf"
# The GIO module, and libglib2.0-0's trigger put it into GIO's module cache.
giomodules=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/gio/modules
inside test -f "$giomodules/libgioreachd.so" || fail "no $giomodules/libgioreachd.so"
inside grep -q '^libgioreachd.so: gio-network-monitor$' "$giomodules/giomodule.cache" ||
  fail "giomodule.cache does not list libgioreachd.so: $(inside cat "$giomodules/giomodule.cache" 2>&1)"
[ "$(inside dpkg-query -W -f='${Conffiles}' reachd | awk 'NF { print $1 }' | sort | tr '\n' ' ')" = "/etc/reachd/dispatcher.conf /etc/reachd/reachd.conf " ] ||
  fail "the package's conffiles are not /etc/reachd/reachd.conf and /etc/reachd/dispatcher.conf: $(inside dpkg-query -W -f='${Conffiles}' reachd)"
# The dispatcher runs as root from /usr/bin and follows reachd; the targets and
# reachd-wait-online are there, not enabled (only the dispatcher starts the targets).
dpid=$(inside systemctl show -p MainPID --value reachd-dispatcher.service)
[ "$(inside readlink /proc/"$dpid"/exe || true)" = /usr/bin/reachd-dispatcher ] || fail "reachd-dispatcher.service does not run /usr/bin/reachd-dispatcher"
for unit in reachd-online.target reachd-internet.target reachd-unmetered.target reachd-wait-online.service; do
  state=$(inside systemctl is-enabled $unit 2>/dev/null || true)
  [ "$state" = static ] || [ "$state" = disabled ] || fail "$unit is '$state' after install (expected static or disabled)"
done
wait_for 20 "reachd-dispatcher to stop reachd-online.target (no network)" \
  sh -c "nsenter -t $leader -a journalctl -u reachd-dispatcher.service --no-pager -o cat | grep -q 'stopping reachd-online.target'" || true

# --- 2. An unprivileged user asks.
status() { as_user reachctl status 2>&1; }
if out=$(status); then log "reachctl status as nobody: $out"; else fail "reachctl status as nobody failed: $out"; fi

# --- 3. Edit the conffile, reload: a veth with an address and a default route is ignored.
inside ip link add rchd0 type veth peer name rchd0p
inside ip link set rchd0p up
inside ip link set rchd0 up
inside ip addr add 10.233.0.2/24 dev rchd0
inside ip route add default via 10.233.0.1 dev rchd0
shows() { [[ $(status) == *"$1"* ]]; }
hides() { [[ $(status) != *"$1"* ]]; }
wait_for 10 "status with rchd0 (is: $(status))" shows "ethernet (rchd0)" && log "with a veth: $(status)" || true
inside sed -i 's/^#IgnoreInterfaces=$/IgnoreInterfaces=rchd*/' /etc/reachd/reachd.conf
inside grep -qx 'IgnoreInterfaces=rchd\*' /etc/reachd/reachd.conf || fail "could not edit /etc/reachd/reachd.conf"
inside systemctl reload reachd.service || fail "systemctl reload reachd failed"
wait_for 10 "status without rchd0 after the reload (is: $(status))" hides rchd0 && log "reloaded with IgnoreInterfaces=rchd*: $(status)" || true
[ "$(inside systemctl show -p MainPID --value reachd.service)" = "$pid1" ] || fail "reload restarted reachd"

# --- 4. Upgrade.
if out=$(apt_get install "$deb2" 2>&1); then
  log "apt-get install $(basename "$deb2") (upgrade): ok"
else
  fail "upgrade failed: $out"
fi
[ "$(inside dpkg-query -W -f='${Version}' reachd)" = "$(dpkg-deb --field "$upper$deb2" Version)" ] || fail "upgrade did not install $deb2"
inside grep -qx 'IgnoreInterfaces=rchd\*' /etc/reachd/reachd.conf || fail "the upgrade lost the edited conffile"
if inside sh -c 'ls /etc/reachd/*.dpkg-* 2>/dev/null' | grep -q .; then fail "the upgrade left $(inside sh -c 'ls /etc/reachd/*.dpkg-*')"; fi
for unit in reachd.socket reachd.service; do
  wait_for 20 "$unit active after the upgrade" sh -c "[ \"\$(nsenter -t $leader -a systemctl is-active $unit)\" = active ]" || true
done
pid2=$(inside systemctl show -p MainPID --value reachd.service)
if [ "$pid2" != "$pid1" ] && [ "$pid2" != 0 ]; then log "upgrade restarted reachd: MainPID $pid1 -> $pid2"; else fail "upgrade did not restart reachd (MainPID $pid1 -> $pid2)"; fi
[ "$(inside systemctl show -p NRestarts --value reachd.service)" = 0 ] || fail "reachd.service restarted by itself"
if out=$(status) && [[ $out != *rchd0* ]]; then log "after the upgrade: $out"; else fail "after the upgrade: $out"; fi

# --- 5. Remove.
apt_get remove reachd >/dev/null 2>&1 || fail "apt-get remove failed"
for unit in reachd.service reachd.socket reachd-dispatcher.service; do
  [ "$(inside systemctl is-active $unit || true)" = inactive ] || fail "$unit is $(inside systemctl is-active $unit || true) after remove"
done
inside pgrep -x reachd >/dev/null && fail "a reachd process survived the remove"
inside test -e /usr/bin/reachd && fail "/usr/bin/reachd survived the remove"
inside test -S /run/reachd/io.reachd.Reachability && fail "the socket survived the remove"
inside grep -qx 'IgnoreInterfaces=rchd\*' /etc/reachd/reachd.conf || fail "remove took the configuration (only purge should)"
log "after remove: units inactive, binaries gone, /etc/reachd/reachd.conf kept"

# --- 6. Purge.
apt_get purge reachd >/dev/null 2>&1 || fail "apt-get purge failed"
inside dpkg-query -W -f='${db:Status-Abbrev}' reachd 2>/dev/null | grep -q '^[^n]' && fail "dpkg still knows reachd after purge"
after_names=$(named_reachd)
if inside grep -q libgioreachd "$giomodules/giomodule.cache" 2>/dev/null; then fail "giomodule.cache still lists libgioreachd.so after purge"; fi
left=$(comm -13 <(echo "$before_names") <(echo "$after_names"))
[ -z "$left" ] || fail "purge left files named reachd: $left"
inside test -e /etc/reachd && fail "purge left /etc/reachd"
# The container boots the host's services too (databases, timers): what they write under /var
# is theirs. Compared: everything outside /var, and where a package or its units keep state.
ours='^\./(var/lib/(dpkg|systemd|private|apt|reachd)/|var/cache/(apt|reachd)/|var/log/(apt/|dpkg\.log)|[^v]|v[^a]|va[^r]|var/[^/]*$)|reachd'
changed=$(comm -13 <(echo "$before_files") <(snapshot) | grep -E "$ours" || true)
log "files the container gained or changed from install to purge (outside other services' /var):"
printf '%s\n' "$changed" | sed 's/^\./    /'
# dpkg's and apt's books, systemd's own state, the system user (Debian packages keep theirs),
# and GIO's module cache, which libglib2.0-0's trigger wrote again without the module.
expected='^\./(var/lib/dpkg/|var/log/(apt/|dpkg\.log$)|var/cache/apt/|var/lib/apt/|var/lib/systemd/(timers|catalog|random-seed|coredump)|etc/(passwd|group|shadow|gshadow|subuid|subgid)-?$|etc/\.pwd\.lock$|etc/ld\.so\.cache$|usr/lib/[^/]+/gio/modules/giomodule\.cache$)'
unexpected=$(printf '%s\n' "$changed" | grep -Ev "$expected" | grep . || true)
[ -z "$unexpected" ] || fail "purge left: $unexpected"
if printf '%s\n' "$changed" | grep -E 'reachd|deb-systemd-helper' | grep -q .; then fail "purge left reachd's state: $(printf '%s\n' "$changed" | grep -E 'reachd|deb-systemd-helper')"; fi
inside grep -q '^reachd:' /etc/passwd && log "the system user reachd stays (Debian packages keep theirs)"

if [ $failures -gt 0 ]; then
  echo "--- journal of reachd in the container:" >&2
  inside journalctl -u reachd.service -u reachd.socket --no-pager -o cat 2>&1 | tail -30 >&2 || true
  exit 1
fi
log "install, reload, upgrade, remove and purge of the package under systemd: ok"
