#!/bin/sh
# scripts/fresh-scratch.sh SCRATCH: empties SCRATCH (a SwiftPM scratch directory of a package that
# depends on reachd by path) when reachd's list of files has changed since it was last used, and
# creates it. SwiftPM's incremental build of a path dependency misses source files added to it,
# so such a build must start afresh then. Run from reachd's root.
set -eu
scratch=${1:?usage: scripts/fresh-scratch.sh SCRATCH}
files=$(find Package.swift Sources -type f | sort | cksum)
if [ "$(cat "$scratch/.reachd-files" 2>/dev/null)" != "$files" ]; then
    rm -rf "$scratch"
    mkdir -p "$scratch"
    echo "$files" > "$scratch/.reachd-files"
fi
