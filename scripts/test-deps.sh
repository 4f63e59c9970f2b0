#!/usr/bin/env bash
# Runs scripts/deps.sh as on a fresh machine, whatever this one has installed: a copy of it in a
# temporary tree, with shims first on PATH — a dpkg-query that knows only the packages a case
# names (it exits 1 for the rest, as the real one does for a package it never heard of), an
# apt-get that records its arguments (and fails when a case says so), a systemctl that does
# nothing — and a stand-in .venv whose python finds every module. Checks that exactly the
# missing packages are installed, with one `apt-get update` first and one `install`, that a run
# with nothing missing asks apt nothing, that a failing apt is reported with what it said and
# the command that mends it, and that a non-root user (setpriv) is told the `apt-get install`
# line and apt is not run. Needs root for the last case (it skips it otherwise, saying so).
set -euo pipefail
cd "$(dirname "$0")/.."
source=$PWD/scripts/deps.sh

# The packages deps.sh wants, from its own list.
mapfile -t wanted < <(sed -n '/^APT_PACKAGES=(/,/)/p' "$source" | tr -d '()' | sed 's/APT_PACKAGES=//' | tr ' ' '\n' | grep -v '^$')
[ ${#wanted[@]} -gt 5 ] || { echo "test-deps: FAIL: could not read the package list of $source" >&2; exit 1; }

work=$(mktemp -d /tmp/reachd-deps-XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "test-deps: FAIL: $*" >&2; failures=$((failures + 1)); }

# A tree of its own per case: scripts/deps.sh, the shims, the stand-in .venv, the records.
make_case() {
  local dir=$work/$1
  mkdir -p "$dir/tree/scripts" "$dir/bin" "$dir/tree/.venv/bin"
  cp "$source" "$dir/tree/scripts/deps.sh"
  printf '#!/bin/sh\nexit 0\n' > "$dir/tree/.venv/bin/python"
  : > "$dir/known"; : > "$dir/apt.log"
  cat > "$dir/bin/dpkg-query" <<EOF
#!/bin/sh
# Only the packages in $dir/known are installed; of any other: "no packages found", exit 1.
status=0
for p in "\$@"; do
  case "\$p" in -*) continue ;; esac
  if grep -qx "\$p" "$dir/known"; then echo "\$p=ii "; else echo "dpkg-query: no packages found matching \$p" >&2; status=1; fi
done
exit \$status
EOF
  cat > "$dir/bin/apt-get" <<EOF
#!/bin/sh
echo "\$*" >> "$dir/apt.log"
if [ -e "$dir/apt-fails" ]; then echo "E: Unable to locate package \$(echo "\$*" | awk '{print \$NF}')"; exit 100; fi
exit 0
EOF
  printf '#!/bin/sh\nexit 0\n' > "$dir/bin/systemctl"
  chmod -R a+rX "$dir"; chmod 755 "$dir/bin/"* "$dir/tree/.venv/bin/python"
  chmod 777 "$dir"   # the non-root case writes its records here too
  echo "$dir"
}

run_deps() {  # DIR [ARGS…]: runs the copy with the shims first on PATH; output in DIR/out, status in DIR/status
  local dir=$1; shift
  set +e
  PATH="$dir/bin:$PATH" "$dir/tree/scripts/deps.sh" "$@" > "$dir/out" 2>&1
  echo $? > "$dir/status"
  set -e
}

# 1. Nothing installed (as root): one update, one install of every package, exit 0.
if [ "$(id -u)" -eq 0 ]; then
  dir=$(make_case nothing)
  run_deps "$dir"
  [ "$(cat "$dir/status")" = 0 ] || fail "nothing installed: exit $(cat "$dir/status"): $(cat "$dir/out")"
  [ "$(grep -c '^update' "$dir/apt.log")" = 1 ] || fail "nothing installed: not one apt-get update: $(cat "$dir/apt.log")"
  installs=$(grep '^install' "$dir/apt.log" || true)
  [ "$(printf '%s\n' "$installs" | grep -c .)" = 1 ] || fail "nothing installed: not one apt-get install: $(cat "$dir/apt.log")"
  asked=$(printf '%s\n' "$installs" | tr ' ' '\n' | grep -v '^-' | grep -vx install | sort)
  [ "$asked" = "$(printf '%s\n' "${wanted[@]}" | sort)" ] || fail "nothing installed: installed '$asked', wanted '${wanted[*]}'"
  [ "$(head -1 "$dir/apt.log" | cut -d' ' -f1)" = update ] || fail "nothing installed: apt-get update did not come first"

  # 2. Some installed: exactly the rest.
  dir=$(make_case some)
  printf '%s\n' "${wanted[@]:0:5}" > "$dir/known"
  run_deps "$dir"
  asked=$(grep '^install' "$dir/apt.log" | tr ' ' '\n' | grep -v '^-' | grep -vx install | sort)
  [ "$asked" = "$(printf '%s\n' "${wanted[@]:5}" | sort)" ] || fail "some installed: installed '$asked', wanted '${wanted[*]:5}'"

  # 3. All installed: apt is not asked at all, nothing printed.
  dir=$(make_case all)
  printf '%s\n' "${wanted[@]}" > "$dir/known"
  run_deps "$dir"
  [ "$(cat "$dir/status")" = 0 ] && [ ! -s "$dir/apt.log" ] && [ ! -s "$dir/out" ] \
    || fail "all installed: exit $(cat "$dir/status"), apt: $(cat "$dir/apt.log"), said: $(cat "$dir/out")"

  # 4. apt fails: non-zero, what apt said, and the command that mends it.
  dir=$(make_case aptfails)
  touch "$dir/apt-fails"
  run_deps "$dir"
  [ "$(cat "$dir/status")" != 0 ] || fail "apt fails: exit 0"
  grep -q 'E: Unable to locate package' "$dir/out" || fail "apt fails: apt's words not shown: $(cat "$dir/out")"
  grep -q "apt-get update" "$dir/out" || fail "apt fails: no mending command: $(cat "$dir/out")"

  # 5. make deb's and make fuzz's extras: named when missing.
  dir=$(make_case deb)
  printf '%s\n' "${wanted[@]}" > "$dir/known"
  run_deps "$dir" deb
  asked=$(grep '^install' "$dir/apt.log" | tr ' ' '\n' | grep -v '^-' | grep -vx install | sort | tr '\n' ' ')
  [ "$asked" = "debhelper lintian " ] || fail "deb: installed '$asked', wanted 'debhelper lintian'"
  dir=$(make_case fuzz)
  printf '%s\n' "${wanted[@]}" > "$dir/known"
  printf '#!/bin/sh\nexit 1\n' > "$dir/bin/no-fuzzer-cc"; chmod 755 "$dir/bin/no-fuzzer-cc"
  set +e; PATH="$dir/bin:$PATH" FUZZ_CC=no-fuzzer-cc "$dir/tree/scripts/deps.sh" fuzz > "$dir/out" 2>&1; set -e
  asked=$(grep '^install' "$dir/apt.log" | tr ' ' '\n' | grep -v '^-' | grep -vx install | tr '\n' ' ')
  [ "$asked" = "clang " ] || fail "fuzz: installed '$asked', wanted 'clang'"
  dir=$(make_case unknown)
  run_deps "$dir" frobnicate
  [ "$(cat "$dir/status")" != 0 ] && grep -q "usage: scripts/deps.sh" "$dir/out" || fail "an unknown set: $(cat "$dir/out")"

  # 6. Not root (nobody): the apt-get install line for exactly the missing packages; apt not run.
  dir=$(make_case user)
  printf '%s\n' "${wanted[@]:2}" > "$dir/known"
  set +e
  setpriv --reuid=65534 --regid=65534 --clear-groups env PATH="$dir/bin:$PATH" HOME=/nonexistent \
    "$dir/tree/scripts/deps.sh" > "$dir/out" 2>&1
  echo $? > "$dir/status"
  set -e
  [ "$(cat "$dir/status")" != 0 ] || fail "not root: exit 0"
  grep -q "apt-get install -y --no-install-recommends ${wanted[0]} ${wanted[1]}\$" "$dir/out" \
    || fail "not root: no install line for '${wanted[0]} ${wanted[1]}': $(cat "$dir/out")"
  [ ! -s "$dir/apt.log" ] || fail "not root: apt-get was run: $(cat "$dir/apt.log")"
  cases=7
else
  # Without root only the non-root case runs, as this user.
  echo "test-deps: not root: the cases that install (root) are skipped; the non-root case runs as $(id -un)"
  dir=$(make_case user)
  printf '%s\n' "${wanted[@]:2}" > "$dir/known"
  run_deps "$dir"
  [ "$(cat "$dir/status")" != 0 ] || fail "not root: exit 0"
  grep -q "apt-get install -y --no-install-recommends ${wanted[0]} ${wanted[1]}\$" "$dir/out" \
    || fail "not root: no install line: $(cat "$dir/out")"
  [ ! -s "$dir/apt.log" ] || fail "not root: apt-get was run"
  cases=1
fi

if [ "$failures" -gt 0 ]; then
  echo "test-deps: $failures of the fresh-machine cases failed" >&2
  exit 1
fi
echo "test-deps: ok ($cases cases of a fresh machine: nothing, some, all installed; apt failing; deb and fuzz extras; not root)"
