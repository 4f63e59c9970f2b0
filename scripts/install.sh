#!/usr/bin/env bash
# Installs or uninstalls reachd; called by `make install` / `make uninstall`.
#   install.sh install|uninstall BIN_DIR DESTDIR PREFIX SYSCONFDIR UNITDIR MANDIR COMPLETIONDIR SYSUSERSDIR
# The configuration file is installed only when absent (an edited one is never overwritten) and
# removed on uninstall only when it is still the shipped one.
set -euo pipefail
cd "$(dirname "$0")/.."
action=$1 bin_dir=$2 destdir=$3 prefix=$4 sysconfdir=$5 unitdir=$6 mandir=$7 completiondir=$8 sysusersdir=$9
INSTALL=${INSTALL:-install}

bin="$destdir$prefix/bin"
units="$destdir$unitdir"
conf_dir="$destdir$sysconfdir/reachd"
man="$destdir$mandir"
completions="$destdir$completiondir"
sysusers="$destdir$sysusersdir"

case $action in
install)
  for b in reachd reachctl; do
    [ -x "$bin_dir/$b" ] || { echo "install: $bin_dir/$b is missing (build first)" >&2; exit 1; }
  done
  $INSTALL -d "$bin" "$units" "$conf_dir" "$conf_dir/reachd.conf.d" "$man/man1" "$man/man5" "$man/man8" "$completions" "$sysusers"
  # Stripped: the symbols of a statically linked Swift runtime are most of a binary's size.
  $INSTALL -m 0755 -s --strip-program="${STRIP:-strip}" "$bin_dir/reachd" "$bin/reachd"
  $INSTALL -m 0755 -s --strip-program="${STRIP:-strip}" "$bin_dir/reachctl" "$bin/reachctl"
  # The unit names the installed daemon.
  sed "s|^ExecStart=/usr/local/bin/reachd|ExecStart=$prefix/bin/reachd|" systemd/reachd.service > "$units/reachd.service.tmp"
  chmod 0644 "$units/reachd.service.tmp"
  mv "$units/reachd.service.tmp" "$units/reachd.service"
  $INSTALL -m 0644 systemd/reachd.socket "$units/reachd.socket"
  $INSTALL -m 0644 systemd/reachd.sysusers "$sysusers/reachd.conf"
  if [ -e "$conf_dir/reachd.conf" ]; then
    echo "install: keeping existing $sysconfdir/reachd/reachd.conf"
  else
    $INSTALL -m 0644 config/reachd.conf "$conf_dir/reachd.conf"
  fi
  $INSTALL -m 0644 man/reachctl.1 "$man/man1/reachctl.1"
  $INSTALL -m 0644 man/reachd.conf.5 "$man/man5/reachd.conf.5"
  $INSTALL -m 0644 man/reachd.8 "$man/man8/reachd.8"
  $INSTALL -m 0644 completions/reachctl.bash "$completions/reachctl"
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
    systemctl disable --now reachd.socket reachd.service 2>/dev/null || true
  fi
  rm -f "$bin/reachd" "$bin/reachctl" "$units/reachd.service" "$units/reachd.socket" \
        "$man/man1/reachctl.1" "$man/man5/reachd.conf.5" "$man/man8/reachd.8" "$completions/reachctl" "$sysusers/reachd.conf"
  if [ -f "$conf_dir/reachd.conf" ]; then
    if cmp -s "$conf_dir/reachd.conf" config/reachd.conf; then
      rm -f "$conf_dir/reachd.conf"
    else
      echo "uninstall: keeping edited $sysconfdir/reachd/reachd.conf"
    fi
  fi
  rmdir "$conf_dir/reachd.conf.d" "$conf_dir" 2>/dev/null || true
  # The user "reachd" stays (as with every package): files it owned may remain.
  if [ -z "$destdir" ] && [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi
  ;;
*)
  echo "usage: install.sh install|uninstall BIN_DIR DESTDIR PREFIX SYSCONFDIR UNITDIR MANDIR COMPLETIONDIR SYSUSERSDIR" >&2
  exit 2
  ;;
esac
