#!/bin/sh
# make external-package-test: an outside package that depends on reachd by path builds the
# README's two Swift examples exactly as the README shows them (the fenced blocks after the
# comments `<!-- example: built and run by make external-package-test -->` and `<!-- example:
# built by make external-package-test -->`), and runs the first against a real reachd in a
# private network namespace (root; as non-root it only builds). The first becomes SnippetApp's
# main.swift with a few lines after it that wait for its last callback and say it finished; the
# second, which follows events forever, ClientSnippet's, built only.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
SWIFT=${SWIFT:-swift}

# The fenced block after the line "<!-- example: $1 -->" of the README, without its fences.
readme_block() {
    awk -v marker="<!-- example: $1 -->" '
        $0 == marker { found = 1; next }
        found == 1 && /^```/ { found = 2; next }
        found == 2 && /^```/ { exit }
        found == 2 { print }' "$root/README.md"
}
snippet=$(readme_block "built and run by make external-package-test")
client=$(readme_block "built by make external-package-test")
if [ -z "$snippet" ] || [ -z "$client" ]; then
    echo "external-package-test: README.md has no Swift example marked <!-- example: built (and run) by make external-package-test -->" >&2
    exit 1
fi
mkdir -p "$here/Sources/SnippetApp" "$here/Sources/ClientSnippet"
{
    printf '%s\n' "$snippet"
    cat <<'SWIFT'

// Added by Tests/ExternalPackage/run.sh after the README's example: its last callback gets
// time to print, and the run says it reached the end.
try await Task.sleep(nanoseconds: 500_000_000)
monitor.cancel()
NotificationCenter.default.removeObserver(observer)
print("snippet OK")
SWIFT
} > "$here/Sources/SnippetApp/main.swift"
printf '%s\n' "$client" > "$here/Sources/ClientSnippet/main.swift"

# Its own scratch directory under the package's .build (ignored by git), started afresh when
# reachd's list of files has changed.
scratch="$root/.build/external-package"
(cd "$root" && scripts/fresh-scratch.sh "$scratch")
$SWIFT build --package-path "$here" --scratch-path "$scratch"
app="$($SWIFT build --package-path "$here" --scratch-path "$scratch" --show-bin-path)/SnippetApp"

if [ "$(id -u)" != 0 ]; then
    echo "external-package-test: built; running it skipped: needs root to create network namespaces"
    exit 0
fi

reachd="${REACHD_BIN_DIR:-$($SWIFT build --package-path "$root" --show-bin-path)}/reachd"
ns="rchext$$"
tmp=$(mktemp -d /tmp/reachd-ext-XXXXXX)
# The daemon's last event number goes here, not into the machine's /var/lib/reachd.
export STATE_DIRECTORY=$tmp
pid=""
http=""
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    # SIGKILLed: its wait status is 137, which must not become the exit status under set -e.
    if [ -n "$http" ]; then kill -9 "$http" 2>/dev/null; wait "$http" 2>/dev/null || true; fi
    ip netns del "$ns" 2>/dev/null || true
    ip netns del "${ns}u" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
ip netns add "$ns"; ip netns add "${ns}u"
ip -n "$ns" link set lo up
ip -n "$ns" link add eth0 type veth peer name up0 netns "${ns}u"
ip -n "${ns}u" addr add 10.66.0.1/24 dev up0; ip -n "${ns}u" link set up0 up
ip -n "$ns" addr add 10.66.0.2/24 dev eth0; ip -n "$ns" link set eth0 up
ip -n "$ns" route add default via 10.66.0.1
# The connectivity check asks a server in the uplink namespace (nothing leaves the namespaces),
# so the snippet's NetworkDetector part has an answer to print: 204, full.
cat > "$tmp/probe_server.py" <<'PY'
import http.server, signal, sys
signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM, signal.SIGINT])
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args):
        pass
    def do_GET(self):
        self.send_response(204); self.end_headers()
open(sys.argv[1], "w").write("ready")
http.server.HTTPServer(("10.66.0.1", 8080), Handler).serve_forever()
PY
ip netns exec "${ns}u" python3 "$tmp/probe_server.py" "$tmp/http.ready" &
http=$!
i=0
while [ ! -f "$tmp/http.ready" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -f "$tmp/http.ready" ] || { echo "external-package-test: the test HTTP server did not start" >&2; exit 1; }
printf '[Connectivity]\nEnabled=yes\nURL=http://10.66.0.1:8080/generate_204\n[Cellular]\nModemManager=no\n' > "$tmp/reachd.conf"
ip netns exec "$ns" "$reachd" --socket "$tmp/sock" --config "$tmp/reachd.conf" 2> "$tmp/reachd.log" &
pid=$!
i=0
while [ ! -S "$tmp/sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -S "$tmp/sock" ] || { cat "$tmp/reachd.log" >&2; echo "external-package-test: reachd did not start" >&2; exit 1; }

out=$(ip netns exec "$ns" env REACHD_SOCKET="$tmp/sock" timeout 60 "$app")
echo "$out"
echo "$out" | grep -qx "ethernet" || { echo "external-package-test: the snippet did not report ethernet" >&2; exit 1; }
# NetworkDetector.shared.check() through reachd's Probe: reachable, HTTP 204 (0 would mean no answer), no error, full;
# then checkNetworkReachability's completion.
echo "$out" | grep -qx "true 204 nil full" || { echo "external-package-test: NetworkDetector.check() did not report 204/full" >&2; exit 1; }
echo "$out" | grep -qx "true" || { echo "external-package-test: checkNetworkReachability's completion did not report true" >&2; exit 1; }
echo "$out" | grep -qx "snippet OK" || { echo "external-package-test: the snippet did not finish" >&2; exit 1; }
echo "external-package-test: OK"
