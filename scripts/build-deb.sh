#!/usr/bin/env bash
# Builds reachd_VERSION_ARCH.deb in the repository's top directory (`make deb`).
#   build-deb.sh BIN_DIR    (release binaries, Swift runtime linked in: `make release`)
#   build-deb.sh --version  (prints the upstream version)
# VERSION is ReachdVersion.string (Sources/ReachabilityCore/Model/ReachdVersion.swift, the one place
# the version lives) plus a Debian revision, DEB_REVISION (default 1): a rebuild of the same
# sources as a newer package raises only that. DEB_OUT_DIR (default: here) is where the .deb
# goes; DEB_LINTIAN=no skips lintian. The package is assembled by debhelper in a
# staging tree under .build/deb/ (packaging/debian/ as debian/, the binaries, units, man pages,
# configuration, completion and contrib/), then checked with lintian: any error or warning
# that packaging/debian/reachd.lintian-overrides does not explain fails the build.
set -euo pipefail
cd "$(dirname "$0")/.."
bin_dir=${1:?usage: build-deb.sh BIN_DIR | --version}
revision=${DEB_REVISION:-1}

upstream=$(sed -n 's/^ *public static let string = "\([^"]*\)".*/\1/p' Sources/ReachabilityCore/Model/ReachdVersion.swift)
[[ $upstream =~ ^[0-9][0-9A-Za-z.+~]*$ ]] || { echo "build-deb: no version in ReachdVersion.swift (got '$upstream')" >&2; exit 1; }
if [ "$bin_dir" = --version ]; then echo "$upstream"; exit 0; fi
[[ $revision =~ ^[0-9A-Za-z.+~]+$ ]] || { echo "build-deb: bad DEB_REVISION '$revision'" >&2; exit 1; }
version=$upstream-$revision
for b in reachd reachctl reachd-dispatcher; do
  [ -x "$bin_dir/$b" ] || { echo "build-deb: $bin_dir/$b is missing (make release first)" >&2; exit 1; }
  # The package must not need the toolchain: no Swift library may be linked dynamically.
  if objdump -p "$bin_dir/$b" | grep -E 'NEEDED +lib(swift|Foundation|dispatch|BlocksRuntime|_Foundation)'; then
    echo "build-deb: $bin_dir/$b links the Swift runtime dynamically (build with --static-swift-stdlib)" >&2
    exit 1
  fi
done

out=.build/deb
stage=$out/reachd-$upstream
rm -rf "$out"
mkdir -p "$stage/bin"
cp -R packaging/debian "$stage/debian"
cp "$bin_dir/reachd" "$bin_dir/reachctl" "$bin_dir/reachd-dispatcher" "$stage/bin/"
cp -R config man completions systemd gio "$stage/"
mkdir -p "$stage/contrib"
if [ -d contrib ]; then cp -R contrib/. "$stage/contrib/"; fi
# The units name the packaged daemon; sysusers.d as dh_installsysusers expects it.
sed 's|^ExecStart=/usr/local/bin/reachd|ExecStart=/usr/bin/reachd|' systemd/reachd.service > "$stage/debian/reachd.service"
grep -qx 'ExecStart=/usr/bin/reachd' "$stage/debian/reachd.service" || { echo "build-deb: reachd.service has no ExecStart=/usr/local/bin/reachd to rewrite" >&2; exit 1; }
cp systemd/reachd.socket "$stage/debian/reachd.socket"
cp systemd/reachd.sysusers "$stage/debian/reachd.sysusers"

# The changelog carries the version; its date is the commit's, so that a rebuild is the same.
when=$(git log -1 --format=%aD 2>/dev/null || date -R)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
maintainer=$(sed -n 's/^Maintainer: //p' packaging/debian/control)
{
  echo "reachd ($version) unstable; urgency=medium"
  echo
  echo "  * reachd $upstream, built from commit $commit."
  echo
  echo " -- $maintainer  $when"
} > "$stage/debian/changelog"

# Binary only: Swift is not a Debian package, so there is no source package to build from.
( cd "$stage" && dpkg-buildpackage --build=binary --no-sign ${DEB_QUIET:+-q} ) > "$out/build.log" 2>&1 ||
  { tail -40 "$out/build.log" >&2; echo "build-deb: dpkg-buildpackage failed (log: $out/build.log)" >&2; exit 1; }

arch=$(dpkg-architecture -qDEB_HOST_ARCH)
deb=reachd_${version}_${arch}.deb
dest=${DEB_OUT_DIR:-.}/$deb
cp "$out/$deb" "$dest"
echo "build-deb: $dest ($(du -h "$dest" | cut -f1))"
dpkg-deb --field "$dest" Depends | sed 's/^/build-deb: Depends: /'
# The GIO module made it into GLib's module directory.
grep -q " ./usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/gio/modules/libgioreachd.so$" <<<"$(dpkg-deb --contents "$dest")" ||
  { echo "build-deb: the GIO module is not in the package" >&2; exit 1; }
# Every file of contrib/ made it in.
if [ -d contrib ]; then
  contents=$(dpkg-deb --contents "$dest" | awk '{ print $6 }')
  while IFS= read -r -d '' f; do
    grep -qxF "./usr/share/reachd/contrib/${f#contrib/}" <<<"$contents" ||
      { echo "build-deb: $f is not in the package" >&2; exit 1; }
  done < <(find contrib -type f -print0)
fi
if [ "${DEB_LINTIAN:-yes}" = no ]; then exit 0; fi

# --fail-on warning: errors and warnings fail; overrides carry the reason for each one kept.
# Informational tags are listed in the log (the spelling ones are in the runtime's ICU data).
# Not --show-overrides: with it, lintian 2.116 fails on overridden warnings too.
lintian --fail-on error,warning --display-info "$dest" > "$out/lintian.log" 2>&1 ||
  { grep -v '^I: ' "$out/lintian.log" >&2; echo "build-deb: lintian found errors or warnings in $deb (log: $out/lintian.log)" >&2; exit 1; }
echo "build-deb: lintian: no errors or warnings ($(grep -c '^I: ' "$out/lintian.log" || true) informational tags;" \
  "overrides with their reasons: packaging/debian/reachd.lintian-overrides; log: $out/lintian.log)"
