#!/usr/bin/env bash
# Tests `make install` / `make uninstall` into a temporary DESTDIR: every file lands where it
# should with the right mode, the unit names the installed binary, an existing (edited)
# configuration is never overwritten and survives uninstall, the man pages format without
# warnings and the bash completion loads and completes.
set -euo pipefail
cd "$(dirname "$0")/.."

bin_dir=${REACHD_BIN_DIR:-$(swift build --show-bin-path)}
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
failures=0
fail() { echo "check-install: FAIL: $*" >&2; failures=$((failures + 1)); }
expect_file() { # path mode
  if [ ! -f "$root$1" ]; then fail "$1 missing"; return; fi
  local mode; mode=$(stat -c %a "$root$1")
  [ "$mode" = "$2" ] || fail "$1 has mode $mode, expected $2"
}

make -s install DESTDIR="$root" PREFIX=/usr BIN_DIR="$bin_dir" >/dev/null
giomoduledir=$(pkg-config --variable=giomoduledir gio-2.0)

expect_file /usr/bin/reachd 755
expect_file /usr/bin/reachctl 755
expect_file /usr/bin/reachd-dispatcher 755
expect_file /usr/lib/systemd/system/reachd.service 644
expect_file /usr/lib/systemd/system/reachd.socket 644
for unit in reachd-dispatcher.service reachd-wait-online.service reachd-online.target reachd-internet.target reachd-unmetered.target; do
  expect_file /usr/lib/systemd/system/$unit 644
done
expect_file /etc/reachd/dispatcher.conf 644
expect_file /usr/share/man/man8/reachd-dispatcher.8 644
expect_file /usr/share/man/man5/dispatcher.conf.5 644
for dir in /etc/reachd/dispatcher.d /etc/reachd/dispatcher.conf.d /usr/lib/reachd/dispatcher.d; do
  [ "$(stat -c %a "$root$dir" 2>/dev/null)" = 755 ] || fail "$dir missing or not mode 755"
done
grep -qx 'ExecStart=/usr/bin/reachd-dispatcher' "$root/usr/lib/systemd/system/reachd-dispatcher.service" \
  || fail "reachd-dispatcher.service does not start /usr/bin/reachd-dispatcher"
grep -q '^ExecStart=/usr/bin/reachctl wait --internet ' "$root/usr/lib/systemd/system/reachd-wait-online.service" \
  || fail "reachd-wait-online.service does not run /usr/bin/reachctl"
expect_file /usr/lib/sysusers.d/reachd.conf 644
expect_file /etc/reachd/reachd.conf 644
expect_file /usr/share/man/man8/reachd.8 644
expect_file /usr/share/man/man1/reachctl.1 644
expect_file /usr/share/man/man5/reachd.conf.5 644
expect_file /usr/share/bash-completion/completions/reachctl 644
# The GIO module, in GLib's own module directory, stripped; no module cache written into a DESTDIR.
expect_file "$giomoduledir/libgioreachd.so" 644
if readelf -S "$root$giomoduledir/libgioreachd.so" 2>/dev/null | grep -q '\.symtab'; then fail "installed libgioreachd.so is not stripped"; fi
readelf -Ws --dyn-syms "$root$giomoduledir/libgioreachd.so" 2>/dev/null | grep -q ' g_io_module_load$' \
  || fail "installed libgioreachd.so does not export g_io_module_load"
[ ! -e "$root$giomoduledir/giomodule.cache" ] || fail "install wrote giomodule.cache into the DESTDIR"
[ -d "$root/etc/reachd/reachd.conf.d" ] || fail "/etc/reachd/reachd.conf.d missing"
grep -qx 'ExecStart=/usr/bin/reachd' "$root/usr/lib/systemd/system/reachd.service" \
  || fail "reachd.service does not start /usr/bin/reachd"
strip -o "$root/reachd.stripped" "$bin_dir/reachd"
cmp -s "$root/usr/bin/reachd" "$root/reachd.stripped" || fail "installed reachd is not the built one, stripped"
rm "$root/reachd.stripped"
for b in reachd reachctl reachd-dispatcher; do
  if readelf -S "$root/usr/bin/$b" | grep -q '\.symtab'; then fail "installed $b is not stripped"; fi
done
# The sysusers.d entry creates the user the unit names (dry run into the DESTDIR).
out=$(systemd-sysusers --root="$root" --dry-run 2>&1 || true)
[[ $out == *"Creating user 'reachd'"* ]] || fail "sysusers.d/reachd.conf does not create user reachd: $out"
grep -qx 'User=reachd' "$root/usr/lib/systemd/system/reachd.service" || fail "reachd.service does not name User=reachd"

# The installed units verify cleanly (a copy whose ExecStart= reaches into DESTDIR).
mkdir -p "$root/verify"
sed "s|^ExecStart=/usr/bin/reachd|ExecStart=$root/usr/bin/reachd|" "$root/usr/lib/systemd/system/reachd.service" > "$root/verify/reachd.service"
cp "$root/usr/lib/systemd/system/reachd.socket" "$root/verify/reachd.socket"
for unit in reachd-dispatcher.service reachd-wait-online.service; do
  sed "s|^ExecStart=/usr/bin/|ExecStart=$root/usr/bin/|" "$root/usr/lib/systemd/system/$unit" > "$root/verify/$unit"
done
cp "$root"/usr/lib/systemd/system/reachd-*.target "$root/verify/"
out=$(cd "$root/verify" && systemd-analyze verify --man=no ./*.service ./*.socket ./*.target 2>&1 || true)
[ -z "$out" ] || fail "installed units do not verify: $out"
rm -rf "$root/verify"

# Man pages format without warnings.
for page in usr/share/man/man8/reachd.8 usr/share/man/man1/reachctl.1 usr/share/man/man5/reachd.conf.5 \
            usr/share/man/man8/reachd-dispatcher.8 usr/share/man/man5/dispatcher.conf.5; do
  warnings=$(LC_ALL=C.UTF-8 groff -man -ww -z -t -K utf8 "$root/$page" 2>&1 || true)
  [ -z "$warnings" ] || fail "$page: $warnings"
done

# The completion offers the commands, and the options of a command.
words=$(bash -c 'source "$1"; COMP_WORDS=(reachctl ""); COMP_CWORD=1; _reachctl; echo "${COMPREPLY[*]}"' _ \
  "$root/usr/share/bash-completion/completions/reachctl")
for w in status monitor wait check probe; do
  [[ " $words " == *" $w "* ]] || fail "completion of 'reachctl ' lacks $w (got: $words)"
done
words=$(bash -c 'source "$1"; COMP_WORDS=(reachctl wait --); COMP_CWORD=2; _reachctl; echo "${COMPREPLY[*]}"' _ \
  "$root/usr/share/bash-completion/completions/reachctl")
[[ " $words " == *" --timeout "* && " $words " == *" --internet "* ]] || fail "completion of 'reachctl wait --' is: $words"

# Re-installing keeps an edited configuration.
printf '[Events]\nHistory=7\n' >> "$root/etc/reachd/reachd.conf"
printf '[Targets]\nHoldSec=7\n' >> "$root/etc/reachd/dispatcher.conf"
make -s install DESTDIR="$root" PREFIX=/usr BIN_DIR="$bin_dir" >/dev/null
grep -qx 'History=7' "$root/etc/reachd/reachd.conf" || fail "install overwrote an edited reachd.conf"
grep -qx 'HoldSec=7' "$root/etc/reachd/dispatcher.conf" || fail "install overwrote an edited dispatcher.conf"
# A script the administrator added.
printf '#!/bin/sh\n' > "$root/etc/reachd/dispatcher.d/50-mine"

# Uninstall removes everything but the edited configuration and the administrator's script.
make -s uninstall DESTDIR="$root" PREFIX=/usr >/dev/null
left=$(cd "$root" && find . -type f | sort | tr '\n' ' ')
[ "$left" = "./etc/reachd/dispatcher.conf ./etc/reachd/dispatcher.d/50-mine ./etc/reachd/reachd.conf " ] || fail "after uninstall, left: $left"

# An unedited configuration goes with uninstall, and so do the empty directories.
rm -rf "${root:?}"/*
make -s install DESTDIR="$root" BIN_DIR="$bin_dir" >/dev/null
expect_file /usr/local/bin/reachd 755
expect_file "$giomoduledir/libgioreachd.so" 644
expect_file /usr/local/lib/systemd/system/reachd.service 644
expect_file /usr/local/lib/sysusers.d/reachd.conf 644
grep -qx 'ExecStart=/usr/local/bin/reachd' "$root/usr/local/lib/systemd/system/reachd.service" \
  || fail "PREFIX=/usr/local unit does not start /usr/local/bin/reachd"
make -s uninstall DESTDIR="$root" >/dev/null
left=$(cd "$root" && find . -type f | sort)
[ -z "$left" ] || fail "after uninstall of an unedited install, left: $left"
[ ! -e "$root/etc/reachd" ] || fail "uninstall left /etc/reachd"
[ ! -e "$root/usr/local/lib/reachd" ] || fail "uninstall left /usr/local/lib/reachd"

if [ $failures -gt 0 ]; then exit 1; fi
echo "check-install: make install/uninstall into DESTDIR: ok"
