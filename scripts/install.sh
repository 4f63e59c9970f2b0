#!/usr/bin/env bash
# Installs or uninstalls reachd; called by `make install` / `make uninstall`.
#   install.sh install|uninstall BIN_DIR DESTDIR PREFIX SYSCONFDIR UNITDIR MANDIR COMPLETIONDIR SYSUSERSDIR [GIOMODULEDIR]
# GIOMODULEDIR (default: GLib's own, `pkg-config --variable=giomoduledir gio-2.0`) receives the
# GIO network monitor module, .build/gio/libgioreachd.so (`make gio`); GLib reads modules from
# its own directory only, whatever PREFIX is. GIO's module cache is refreshed when not
# installing into a DESTDIR.
# The configuration file is installed only when absent (an edited one is never overwritten) and
# removed on uninstall only when it is still the shipped one.
set -euo pipefail
cd "$(dirname "$0")/.."
action=$1 bin_dir=$2 destdir=$3 prefix=$4 sysconfdir=$5 unitdir=$6 mandir=$7 completiondir=$8 sysusersdir=$9
giomoduledir=${10:-}
INSTALL=${INSTALL:-install}
gio_module=.build/gio/libgioreachd.so
if [ -z "$giomoduledir" ]; then
  giomoduledir=$(pkg-config --variable=giomoduledir gio-2.0 2>/dev/null || true)
  [ -n "$giomoduledir" ] || { echo "install: GLib's module directory unknown (pkg-config gio-2.0; scripts/deps.sh installs it)" >&2; exit 1; }
fi
gio_modules="$destdir$giomoduledir"
# giomodule.cache tells GLib which module implements what, so that it loads only those it needs.
refresh_gio_cache() {
  [ -z "$destdir" ] || return 0
  local querymodules
  querymodules=$(pkg-config --variable=gio_querymodules gio-2.0 2>/dev/null || true)
  if [ -n "$querymodules" ] && [ -x "$querymodules" ] && [ -d "$giomoduledir" ]; then "$querymodules" "$giomoduledir"; fi
}

bin="$destdir$prefix/bin"
units="$destdir$unitdir"
conf_dir="$destdir$sysconfdir/reachd"
man="$destdir$mandir"
completions="$destdir$completiondir"
sysusers="$destdir$sysusersdir"

case $action in
install)
  for b in reachd reachctl reachd-dispatcher; do
    [ -x "$bin_dir/$b" ] || { echo "install: $bin_dir/$b is missing (build first)" >&2; exit 1; }
  done
  [ -f "$gio_module" ] || { echo "install: $gio_module is missing (make gio)" >&2; exit 1; }
  $INSTALL -d "$bin" "$units" "$conf_dir" "$conf_dir/reachd.conf.d" "$conf_dir/dispatcher.conf.d" "$conf_dir/dispatcher.d" \
    "$destdir$prefix/lib/reachd/dispatcher.d" "$man/man1" "$man/man5" "$man/man8" "$completions" "$sysusers"
  # Stripped: the symbols of a statically linked Swift runtime are most of a binary's size.
  $INSTALL -m 0755 -s --strip-program="${STRIP:-strip}" "$bin_dir/reachd" "$bin/reachd"
  $INSTALL -m 0755 -s --strip-program="${STRIP:-strip}" "$bin_dir/reachctl" "$bin/reachctl"
  $INSTALL -m 0755 -s --strip-program="${STRIP:-strip}" "$bin_dir/reachd-dispatcher" "$bin/reachd-dispatcher"
  # The services name the installed binaries.
  for unit in reachd.service reachd-dispatcher.service reachd-wait-online.service; do
    sed "s|^ExecStart=/usr/local/bin/|ExecStart=$prefix/bin/|" "systemd/$unit" > "$units/$unit.tmp"
    chmod 0644 "$units/$unit.tmp"
    mv "$units/$unit.tmp" "$units/$unit"
  done
  for unit in reachd.socket reachd-online.target reachd-internet.target reachd-unmetered.target; do
    $INSTALL -m 0644 "systemd/$unit" "$units/$unit"
  done
  $INSTALL -m 0644 systemd/reachd.sysusers "$sysusers/reachd.conf"
  if [ -e "$conf_dir/reachd.conf" ]; then
    echo "install: keeping existing $sysconfdir/reachd/reachd.conf"
  else
    $INSTALL -m 0644 config/reachd.conf "$conf_dir/reachd.conf"
  fi
  if [ -e "$conf_dir/dispatcher.conf" ]; then
    echo "install: keeping existing $sysconfdir/reachd/dispatcher.conf"
  else
    $INSTALL -m 0644 config/dispatcher.conf "$conf_dir/dispatcher.conf"
  fi
  $INSTALL -m 0644 man/reachctl.1 "$man/man1/reachctl.1"
  $INSTALL -m 0644 man/reachd.conf.5 "$man/man5/reachd.conf.5"
  $INSTALL -m 0644 man/reachd.8 "$man/man8/reachd.8"
  $INSTALL -m 0644 man/reachd-dispatcher.8 "$man/man8/reachd-dispatcher.8"
  $INSTALL -m 0644 man/dispatcher.conf.5 "$man/man5/dispatcher.conf.5"
  $INSTALL -m 0644 completions/reachctl.bash "$completions/reachctl"
  # Every GLib app's network monitor while reachd answers (docs/glib.md).
  $INSTALL -d "$gio_modules"
  $INSTALL -m 0644 -s --strip-program="${STRIP:-strip}" "$gio_module" "$gio_modules/libgioreachd.so"
  refresh_gio_cache
  # The system user, now rather than at the next boot (packagers: run systemd-sysusers in postinst).
  if [ -z "$destdir" ] && command -v systemd-sysusers >/dev/null; then
    systemd-sysusers "$sysusers/reachd.conf"
  fi
  if [ -z "$destdir" ] && [ -d /run/systemd/system ]; then
    systemctl daemon-reload || true
    echo "install: enable with: systemctl enable --now reachd.socket"
  fi
  ;;
uninstall)
  if [ -z "$destdir" ] && [ -d /run/systemd/system ]; then
    systemctl disable --now reachd-dispatcher.service reachd.socket reachd.service 2>/dev/null || true
  fi
  rm -f "$bin/reachd" "$bin/reachctl" "$bin/reachd-dispatcher" "$units/reachd.service" "$units/reachd.socket" \
        "$units/reachd-dispatcher.service" "$units/reachd-wait-online.service" "$units/reachd-online.target" \
        "$units/reachd-internet.target" "$units/reachd-unmetered.target" \
        "$man/man1/reachctl.1" "$man/man5/reachd.conf.5" "$man/man8/reachd.8" "$man/man8/reachd-dispatcher.8" \
        "$man/man5/dispatcher.conf.5" "$completions/reachctl" "$sysusers/reachd.conf" "$gio_modules/libgioreachd.so"
  refresh_gio_cache
  for conf in reachd.conf dispatcher.conf; do
    if [ -f "$conf_dir/$conf" ]; then
      if cmp -s "$conf_dir/$conf" "config/$conf"; then
        rm -f "$conf_dir/$conf"
      else
        echo "uninstall: keeping edited $sysconfdir/reachd/$conf"
      fi
    fi
  done
  # Directories go only when empty: scripts and drop-ins the administrator added stay.
  rmdir "$conf_dir/reachd.conf.d" "$conf_dir/dispatcher.conf.d" "$conf_dir/dispatcher.d" "$conf_dir" \
        "$destdir$prefix/lib/reachd/dispatcher.d" "$destdir$prefix/lib/reachd" 2>/dev/null || true
  # The user "reachd" stays (as with every package): files it owned may remain.
  if [ -z "$destdir" ] && [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi
  ;;
*)
  echo "usage: install.sh install|uninstall BIN_DIR DESTDIR PREFIX SYSCONFDIR UNITDIR MANDIR COMPLETIONDIR SYSUSERSDIR [GIOMODULEDIR]" >&2
  exit 2
  ;;
esac
