#!/usr/bin/env bash
# Installs what building and testing reachd needs, idempotently: Debian packages only when one
# is missing (with one `apt-get update` first), and the python test client in .venv. When all
# is there it only looks (one dpkg-query, one python), in a few hundredths of a second, so that
# `make run` and `make gio` start at once the second time.
# The GIO module (gio/) needs GLib's and json-glib's headers; its tests python3-gi and the
# desktop portal; mandoc lints the man pages (check-man.sh), jq runs in the README's shell
# example. `deps.sh deb` adds what `make deb` needs (debhelper, lintian); `deps.sh fuzz`
# a clang with libFuzzer for the GIO module's fuzz target (Debian's clang, unless the one on
# PATH, e.g. the Swift toolchain's, already links -fsanitize=fuzzer).
#
# It never stops without saying why: a package dpkg has never heard of is missing (not an
# error), and every failure names what failed and the command that mends it.
# scripts/test-deps.sh runs it as on a fresh machine (recording apt-get and dpkg-query first
# on PATH; as root and not).
set -euo pipefail
cd "$(dirname "$0")/.."
# One at a time: make runs several targets that need it side by side (make test's -j4), and two
# of it creating .venv or running apt at once break each other.
exec 9>"/tmp/reachd-deps-$(id -u)-$(printf '%s' "$PWD" | cksum | cut -d' ' -f1).lock"
flock 9

fail() {
  echo "deps: $1" >&2
  shift
  for line in "$@"; do echo "deps:   $line" >&2; done
  exit 1
}

APT_PACKAGES=(pkg-config libnl-3-dev libnl-route-3-dev libsystemd-dev libssl-dev openssl iproute2 python3-venv
              dbus-daemon python3-dbus systemd-container prometheus curl
              libglib2.0-dev libglib2.0-bin libjson-glib-dev python3-gi gir1.2-glib-2.0 xdg-desktop-portal
              mandoc jq)
case "${1:-}" in
  "") ;;
  deb) APT_PACKAGES+=(debhelper lintian) ;;
  fuzz)
    probe=$(mktemp -d)
    echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void) d; (void) n; return 0; }' > "$probe/probe.c"
    if ! "${FUZZ_CC:-clang}" -fsanitize=fuzzer,address,undefined -o "$probe/probe" "$probe/probe.c" >/dev/null 2>&1; then
      APT_PACKAGES+=(clang)
    fi
    rm -rf "$probe"
    ;;
  *) fail "unknown set '$1'" "usage: scripts/deps.sh [deb|fuzz]" ;;
esac

# One dpkg-query for all of them (one per package took a quarter of a second each run). It exits
# 1 when it has never heard of one of them (a fresh machine): that one is missing, nothing more.
# Its output is read whatever its status; only a dpkg-query that could not run at all is an error.
if ! command -v dpkg-query >/dev/null 2>&1; then
  fail "dpkg-query not found: this script installs with Debian's dpkg and apt" \
       "on another system install these packages' equivalents: ${APT_PACKAGES[*]}"
fi
listing=$(dpkg-query -W -f='${Package}=${db:Status-Abbrev}\n' "${APT_PACKAGES[@]}" 2>/dev/null || true)
installed=" $(printf '%s\n' "$listing" | sed -n 's/=ii *$//p' | tr '\n' ' ') "
missing=()
for p in "${APT_PACKAGES[@]}"; do
  [[ "$installed" == *" $p "* ]] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    fail "missing Debian packages: ${missing[*]}" \
         "install them as root, then run make again:" \
         "sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing[*]}"
  fi
  echo "deps: installing ${missing[*]}"
  log=$(mktemp)
  if ! apt-get update -qq >"$log" 2>&1; then
    cat "$log" >&2; rm -f "$log"
    fail "'apt-get update' failed (above: what apt said)" \
         "mend the package sources or the network, then run: apt-get update && make"
  fi
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$log" 2>&1; then
    cat "$log" >&2; rm -f "$log"
    fail "'apt-get install ${missing[*]}' failed (above: what apt said)" \
         "mend what apt names, then run: apt-get install -y --no-install-recommends ${missing[*]}"
  fi
  rm -f "$log"
  # The tests start Prometheus themselves, in a namespace of their own; the package's service
  # (listening on every address) is not wanted on the machine.
  # (Disabled also without a running systemd, so a container booted over this root does not start it.)
  if [[ " ${missing[*]} " == *" prometheus "* ]] && command -v systemctl >/dev/null 2>&1; then
    if [ -d /run/systemd/system ]; then
      systemctl disable --now prometheus.service >/dev/null 2>&1 || true
    else
      systemctl disable prometheus.service >/dev/null 2>&1 || true
    fi
  fi
fi

PIP_PACKAGES=(varlink python-dbusmock)
# The module each of them provides: when python finds them all, pip is not asked at all (two
# `pip show` calls were most of a second run's time).
PIP_MODULES=(varlink dbusmock)
# Debian's python3, not a pyenv/other one first on PATH: only its site-packages hold python3-dbus
# (dbusmock needs it; building dbus-python from PyPI needs headers we don't install).
PYTHON=/usr/bin/python3
[ -x "$PYTHON" ] || PYTHON=python3
VENV=.venv
if [ -x "$VENV/bin/python" ] && ! "$VENV/bin/python" -c 'import dbus' >/dev/null 2>&1; then
  rm -rf "$VENV"   # made by another python: its system site-packages lack python3-dbus
fi
if [ ! -x "$VENV/bin/python" ]; then
  if ! out=$("$PYTHON" -m venv --system-site-packages "$VENV" 2>&1); then
    echo "$out" >&2
    fail "'$PYTHON -m venv $VENV' failed (above: what python said)" \
         "install python3-venv (apt-get install python3-venv), then run make again"
  fi
fi
if ! "$VENV/bin/python" -c 'import importlib.util as u, sys; sys.exit(0 if all(u.find_spec(m) for m in sys.argv[1:]) else 1)' \
     "${PIP_MODULES[@]}" >/dev/null 2>&1; then
  for p in "${PIP_PACKAGES[@]}"; do
    "$VENV/bin/python" -m pip show -q "$p" >/dev/null 2>&1 && continue
    if ! out=$("$VENV/bin/python" -m pip install -q "$p" 2>&1); then
      echo "$out" >&2
      fail "'pip install $p' into $VENV failed (above: what pip said)" \
           "mend what pip names, then run: $VENV/bin/python -m pip install $p"
    fi
  done
fi
