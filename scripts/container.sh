# Shared by test-deb.sh, test-systemd.sh and test-dispatcher-systemd.sh (sourced, not run):
# systemd as PID 1 in a container, systemd-nspawn over an overlay of `/` inside a private mount
# namespace, with a private network. Set `check` (the log prefix: check-deb, check-systemd) first.
# Gives: $work (removed at exit), $upper (the overlay's upper layer, to fill before the boot),
# $root, $failures; log, fail, wait_for; container_boot [NSPAWN-OPTION...], which sets $leader,
# then inside and as_user.
#
# First, what every such check needs: without root it says SKIPPED and exits 0; as root nothing
# is skipped silently: a missing tool is a failure naming what installs it, and
# REACHD_SKIP_SYSTEMD_TEST=1 is refused in CI (CI set, as .ci/run does).
if [ "$(id -u)" -ne 0 ]; then echo "$check: SKIPPED: needs root (systemd-nspawn)"; exit 0; fi
if [ "${REACHD_SKIP_SYSTEMD_TEST:-0}" = 1 ]; then
  if [ -n "${CI:-}" ]; then echo "$check: FAIL: REACHD_SKIP_SYSTEMD_TEST=1 in CI: the systemd checks must run" >&2; exit 1; fi
  echo "$check: SKIPPED on request (REACHD_SKIP_SYSTEMD_TEST=1): nothing was checked" >&2
  exit 0
fi
for tool in systemd-nspawn unshare nsenter; do
  command -v $tool >/dev/null || { echo "$check: FAIL: $tool missing: run scripts/deps.sh (apt-get install -y systemd-container util-linux)" >&2; exit 1; }
done

work=$(mktemp -d "/tmp/reachd-${check#check-}.XXXXXX")
upper=$work/upper root=$work/root
mkdir -p "$upper" "$work/overlay-work" "$root"
# The container is a new machine for reachd: what this one keeps (the last event number, kept by
# a reachd run here as root) is hidden behind whiteouts, or the service's StateDirectory= with
# DynamicUser= would move it to /var/lib/private across the overlay (EXDEV) and fail to start.
mkdir -p "$upper/var/lib/private"
chmod 0700 "$upper/var/lib/private"
mknod "$upper/var/lib/reachd" c 0 0
mknod "$upper/var/lib/private/reachd" c 0 0
nspawn_pid=
leader=
failures=0

log() { echo "$check: $*"; }
fail() { echo "$check: FAIL: $*" >&2; failures=$((failures + 1)); }
inside() { nsenter -t "$leader" -a "$@"; }
as_user() { inside setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
cleanup() {
  if [ -n "$nspawn_pid" ] && kill -0 "$nspawn_pid" 2>/dev/null; then
    # nspawn turns SIGTERM into an orderly shutdown of the container's systemd.
    kill -TERM "$nspawn_pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$nspawn_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$nspawn_pid" 2>/dev/null || true
    wait "$nspawn_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

wait_for() { # seconds, description, command...
  local seconds=$1 what=$2; shift 2
  for _ in $(seq $((seconds * 10))); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  fail "timed out after ${seconds}s waiting for: $what"
  return 1
}

# Boots the container with $upper over `/` (extra systemd-nspawn options as arguments) and waits
# for its systemd to finish booting; exits 1 when systemd does not start.
container_boot() {
  # unshare execs bash, which execs nspawn: $! is nspawn's PID.
  unshare -m --propagation private bash -c '
    upper=$1 workdir=$2 root=$3; shift 3
    mount -t overlay overlay -o "lowerdir=/,upperdir=$upper,workdir=$workdir" "$root" &&
    exec systemd-nspawn --quiet --register=no --keep-unit --private-network "$@" -D "$root" -b --console=pipe
  ' _ "$upper" "$work/overlay-work" "$root" "$@" > "$work/console.log" 2>&1 &
  nspawn_pid=$!
  for _ in $(seq 100); do
    for child in $(pgrep -P "$nspawn_pid" || true); do
      [ "$(cat /proc/"$child"/comm 2>/dev/null)" = systemd ] && leader=$child
    done
    [ -n "$leader" ] && break
    sleep 0.1
  done
  if [ -z "$leader" ]; then
    echo "$check: FAIL: systemd did not start in the container:" >&2; cat "$work/console.log" >&2; exit 1
  fi
  # PID 1 exists before its bus does: wait for the private socket, then for the boot to finish.
  for _ in $(seq 300); do nsenter -t "$leader" -a test -S /run/systemd/private 2>/dev/null && break; sleep 0.1; done
  local state
  state=$(timeout 60 nsenter -t "$leader" -a systemctl is-system-running --wait 2>&1 || true)
  log "container booted (systemd PID $leader on the host): $state"
}
