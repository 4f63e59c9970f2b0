#!/usr/bin/env python3
"""What the GIO module (.build/gio/libgioreachd.so, `make gio`) costs a GLib app, measured with
Debian's python3-gi (Tests/python/gio_monitor.py) against a reachd in a network namespace:

- latency: reachd's Simulate call sent → network-changed in the app (CLOCK_MONOTONIC on both
  sides), against a plain varlink subscriber in python reading the same events;
- g_network_monitor_get_default(): with the module and reachd, without the module (GLib's
  netlink monitor), and with the module and no reachd (its init fails, GLib falls back);
- memory: RSS and private memory (/proc/PID/smaps_rollup) of the app after get_default(), with
  the module and without;
- floods (no reachd, no root: Tests/python/hostile_reachd.py on a socket in a temporary
  directory): events alternating connectivity and metered, 10,000 a second and as fast as the
  socket takes them, and events of almost 1 MiB (the module's limit) as fast, for --flood-seconds; the app's CPU per event (its CPU during the flood,
  less what it spends idle as long, divided by the events sent), network-changed per event,
  the longest gap of its 10 ms timer (how long the main loop was held; and the most CPU the
  app spent between two ticks) and of a 16 ms timer at GTK's drawing priority; and how often
  the module connects to a server that answers and hangs up every time. With --before DIR
  the same for the module in DIR (e.g. main's, built into /tmp/gio-before), side by side.

    bench/gio.py [--reachd PATH] [--changes 100] [--runs 10] [--before DIR] [--flood-runs 3] [--flood-seconds 3]
    bench/gio.py --flood-only [--before DIR] ...

Root (a network namespace, Simulate), except --flood-only. Prints the figures; BENCHMARKS.md
("The GIO module") holds those of the last run, written there by hand. The namespace
(rbg<pid>-*) and every process started are removed on exit.
"""
import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
APP = os.path.join(ROOT, "Tests/python/gio_monitor.py")
HOSTILE = os.path.join(ROOT, "Tests/python/hostile_reachd.py")
MODULES = os.path.join(ROOT, ".build/gio")
PYTHON = "/usr/bin/python3"
NS = f"rbg{os.getpid()}"


def sh(command):
    subprocess.run(command, shell=True, check=True, stdout=subprocess.DEVNULL)


def varlink_call(path, method, parameters, more=False):
    """Sends one call; returns the socket (for more) or the reply."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    message = {"method": method, "parameters": parameters}
    if more:
        message["more"] = True
    s.sendall(json.dumps(message).encode() + b"\0")
    if more:
        return s
    reply = read_message(s, bytearray())
    s.close()
    return reply


def read_message(s, buffer):
    while b"\0" not in buffer:
        data = s.recv(65536)
        if not data:
            raise EOFError("reachd closed the connection")
        buffer += data
    end = buffer.index(b"\0")
    message = json.loads(bytes(buffer[:end]))
    del buffer[: end + 1]
    return message


class App:
    """gio_monitor.py, its lines read as they come."""

    def __init__(self, environment, arguments=()):
        self.process = subprocess.Popen([PYTHON, APP, *arguments], env=environment, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def next(self, event):
        for line in self.process.stdout:
            obj = json.loads(line)
            if obj.get("event") == event:
                return obj
        raise EOFError(f"the app ended before {event}")

    def memory(self):
        fields = {}
        with open(f"/proc/{self.process.pid}/smaps_rollup") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 2 and parts[1].isdigit():
                    fields[parts[0].rstrip(":")] = int(parts[1])
        return fields

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def environment(socket_path, module=True, modules=MODULES):
    env = {k: v for k, v in os.environ.items()
           if k not in ("GIO_USE_NETWORK_MONITOR", "GIO_EXTRA_MODULES", "REACHD_SOCKET", "G_MESSAGES_DEBUG")}
    env["REACHD_SOCKET"] = socket_path
    if module:
        env["GIO_EXTRA_MODULES"] = modules
    return env


class Server:
    """hostile_reachd.py MODE on a socket in `directory`, its lines read as they come."""

    def __init__(self, directory, mode, arguments=()):
        self.path = os.path.join(directory, f"{mode}-{time.monotonic_ns()}")
        self.process = subprocess.Popen([PYTHON, HOSTILE, self.path, mode, *arguments], stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.next("ready")

    def next(self, key):
        for line in self.process.stdout:
            obj = json.loads(line)
            if key in obj:
                return obj
        raise EOFError(f"the server ended before {key}")

    def stop(self):
        self.process.kill()
        self.process.wait()


def flood_once(directory, modules, rate, seconds, mode="flood"):
    """One flood against the module in `modules`: (events, app CPU s, network-changed, longest
    stall ms, most network-changed in one iteration, most CPU ms between two timer ticks,
    longest gap of a timer at GTK's drawing priority), or None when the last event never came."""
    arguments = ["--seconds", str(seconds), "--delay", "0.5"] + (["--rate", str(rate)] if rate else [])
    server = Server(directory, mode, arguments)
    app = App(environment(server.path, modules=modules), ["--count-signals"])
    try:
        ready = app.next("ready")
        assert ready["type"] == "GNetworkMonitorReachd", ready
        flooded = server.next("flooded")["flooded"]
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            app.process.send_signal(signal.SIGUSR2)
            state = app.next("state")
            if state["connectivity"] == "limited" and state["metered"]:
                return (flooded, state["cpuSeconds"] - ready["cpuSeconds"], state["changed"], state["maxGapMs"],
                        state["changedInOneIteration"], state["maxBusyGapMs"], state["maxDrawGapMs"])
            time.sleep(0.1)
        return None
    finally:
        app.stop()
        server.stop()


def idle_cpu(directory, modules, seconds):
    """The app's CPU over `seconds` with a server that answers once and is then silent."""
    server = Server(directory, "good")
    app = App(environment(server.path, modules=modules), ["--count-signals"])
    try:
        ready = app.next("ready")
        time.sleep(seconds)
        app.process.send_signal(signal.SIGUSR2)
        return app.next("state")["cpuSeconds"] - ready["cpuSeconds"]
    finally:
        app.stop()
        server.stop()


def hangups(modules_by_label, seconds=13.0):
    """A server that answers every subscription and hangs up: how often each module connects
    after its first 3 s."""
    directory = tempfile.mkdtemp(prefix="rbh-")
    try:
        for label, modules in modules_by_label:
            server = Server(directory, "hangup")
            app = App(environment(server.path, modules=modules))
            try:
                app.next("ready")
                time.sleep(seconds)
            finally:
                app.stop()
                server.stop()
            accepted = [json.loads(line)["monotonic"] for line in server.process.stdout.read().splitlines()
                        if '"accepted"' in line]
            first = accepted[0] if accepted else 0
            late = [t for t in accepted if t - first >= 3]
            print(f"hang-ups, {label}: {len(accepted)} connections in {seconds:.0f} s, {len(late)} after the first 3 s "
                  f"({len(late) / (seconds - 3):.1f} a second); at {[round(t - first, 1) for t in accepted[:10]]} s")
    finally:
        subprocess.run(["rm", "-rf", directory])


def floods(modules_by_label, runs, seconds):
    """Prints the flood figures of each module, one line per module and rate."""
    directory = tempfile.mkdtemp(prefix="rbf-")
    try:
        for rate, mode in ((10_000, "flood"), (None, "flood"), (None, "big")):
            for label, modules in modules_by_label:
                idle = idle_cpu(directory, modules, seconds + 0.5)
                results = [flood_once(directory, modules, rate, seconds, mode) for _ in range(runs)]
                done = [r for r in results if r is not None]
                name = (f"{rate:,} events/s" if rate else "as fast as the socket takes them") + \
                    (", events of almost 1 MiB" if mode == "big" else "")
                if not done:
                    print(f"flood, {name}, {label}: the last event never arrived")
                    continue
                per_event = [max(0.0, cpu - idle) / events * 1e6 for events, cpu, *_ in done]
                changed = [c / events for events, _, c, *_ in done]
                stalls = [r[3] for r in done]
                busy = [r[5] for r in done]
                draw = [r[6] for r in done]
                print(f"flood, {name}, {label}: {statistics.median([e for e, *_ in done]):,.0f} events in {seconds} s; "
                      f"app CPU {statistics.median(per_event):.1f} µs per event (idle {idle:.2f} s); "
                      f"network-changed per event {statistics.median(changed):.3f} "
                      f"(at most {max(r[4] for r in done)} in one iteration); "
                      f"longest stall {min(stalls):.0f}–{max(stalls):.0f} ms, of it busy {min(busy):.0f}–{max(busy):.0f} ms, "
                      f"of a timer at drawing priority {min(draw):.0f}–{max(draw):.0f} ms (n={len(done)}"
                      f"{'' if len(done) == runs else f', {runs - len(done)} never got the last event'})")
    finally:
        subprocess.run(["rm", "-rf", directory])


def summary(values, unit="ms", digits=2):
    values = sorted(values)
    p90 = values[min(len(values) - 1, int(len(values) * 0.9))]
    return f"median {statistics.median(values):.{digits}f} {unit} (p90 {p90:.{digits}f}, n={len(values)})"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reachd", default=None)
    parser.add_argument("--changes", type=int, default=100)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--before", default=None, help="a directory with another libgioreachd.so to compare")
    parser.add_argument("--flood-runs", type=int, default=3)
    parser.add_argument("--flood-seconds", type=float, default=3.0)
    parser.add_argument("--flood-only", action="store_true")
    args = parser.parse_args()
    modules = [("after", MODULES)] + ([("before", os.path.abspath(args.before))] if args.before else [])
    if args.flood_only:
        floods(modules, args.flood_runs, args.flood_seconds)
        hangups(modules)
        return 0
    if os.geteuid() != 0:
        sys.exit("bench/gio.py: needs root (a network namespace, Simulate)")
    reachd = args.reachd
    if reachd is None:
        for candidate in (".build/static/release/reachd", ".build/release/reachd", ".build/debug/reachd"):
            if os.access(os.path.join(ROOT, candidate), os.X_OK):
                reachd = os.path.join(ROOT, candidate)
                break
    if reachd is None or not os.path.exists(os.path.join(MODULES, "libgioreachd.so")):
        sys.exit("bench/gio.py: build first (make gio; swift build --product reachd)")

    directory = tempfile.mkdtemp(prefix="rbg-")
    path = os.path.join(directory, "io.reachd.Reachability")
    config = os.path.join(directory, "reachd.conf")
    with open(config, "w") as f:
        f.write("[Connectivity]\nEnabled=no\n[Cellular]\nModemManager=no\n")
    daemon = None
    apps = []
    try:
        sh(f"ip netns add {NS}-h && ip netns add {NS}-u && ip -n {NS}-h link set lo up")
        sh(f"ip -n {NS}-h link add eth0 type veth peer name up0 netns {NS}-u")
        sh(f"ip -n {NS}-u addr add 10.201.0.1/24 dev up0 && ip -n {NS}-u link set up0 up")
        sh(f"ip -n {NS}-h addr add 10.201.0.2/24 dev eth0 && ip -n {NS}-h link set eth0 up")
        sh(f"ip -n {NS}-h route add default via 10.201.0.1 dev eth0")
        sh(f"ip netns exec {NS}-h sysctl -qw net.ipv6.conf.all.disable_ipv6=1")
        daemon = subprocess.Popen(["ip", "netns", "exec", f"{NS}-h", reachd, "--socket", path, "--config", config],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 15
        while True:
            try:
                if varlink_call(path, "io.reachd.Reachability.GetStatus", {})["parameters"]["status"]["reachable"]:
                    break
            except (OSError, KeyError, EOFError):
                pass
            if time.monotonic() > deadline:
                sys.exit("bench/gio.py: reachd did not come up reachable")
            time.sleep(0.05)
        print(f"reachd: {reachd}; module: {MODULES}/libgioreachd.so ({os.path.getsize(os.path.join(MODULES, 'libgioreachd.so'))} bytes)")

        # 1. Simulate → network-changed, against a raw varlink subscriber.
        app = App(environment(path))
        apps.append(app)
        ready = app.next("ready")
        assert ready["type"] == "GNetworkMonitorReachd", ready
        raw = varlink_call(path, "io.reachd.Reachability.Subscribe", {}, more=True)
        raw_buffer = bytearray()
        read_message(raw, raw_buffer)   # initial
        to_app, to_raw = [], []
        for i in range(args.changes):
            connectivity = "portal" if i % 2 == 0 else "full"
            sent = time.monotonic()
            varlink_call(path, "io.reachd.Reachability.Simulate", {"connectivity": connectivity, "seconds": 600})
            read_message(raw, raw_buffer)
            to_raw.append((time.monotonic() - sent) * 1000)
            changed = app.next("changed")
            assert changed["connectivity"] == connectivity, changed
            to_app.append((changed["monotonic"] - sent) * 1000)
        raw.close()
        varlink_call(path, "io.reachd.Reachability.Simulate", {"reset": True})
        app.stop()
        print(f"Simulate sent → network-changed in the app: {summary(to_app)}")
        print(f"Simulate sent → event read by a python varlink subscriber: {summary(to_raw)}")

        # 2. get_default() and 3. memory, alternated.
        timings = {"module": [], "none": [], "fallback": []}
        memory = {"module": [], "none": []}
        for _ in range(args.runs):
            for label, env in (("module", environment(path)), ("none", environment(path, module=False)),
                               ("fallback", environment(os.path.join(directory, "absent")))):
                app = App(env)
                apps.append(app)
                ready = app.next("ready")
                timings[label].append(ready["getDefaultMs"])
                if label in memory:
                    memory[label].append(app.memory())
                app.stop()
        print(f"get_default() with the module and reachd: {summary(timings['module'])}")
        print(f"get_default() without the module (GLib's netlink monitor): {summary(timings['none'])}")
        print(f"get_default() with the module and no reachd (fallback): {summary(timings['fallback'])}")
        for key, name in (("Rss", "RSS"), ("Private_Dirty", "private dirty"), ("Anonymous", "anonymous")):
            with_module = statistics.median(m[key] for m in memory["module"])
            without = statistics.median(m[key] for m in memory["none"])
            print(f"{name} of the app: {with_module / 1024:.2f} MiB with the module, {without / 1024:.2f} MiB without "
                  f"(+{(with_module - without):.0f} KiB)")

        # 4. Floods and hang-ups (no reachd needed).
        floods(modules, args.flood_runs, args.flood_seconds)
        hangups(modules)
    finally:
        for app in apps:
            if app.process.poll() is None:
                app.stop()
        if daemon is not None:
            daemon.terminate()
            daemon.wait()
        subprocess.run(f"ip netns del {NS}-h; ip netns del {NS}-u", shell=True, stderr=subprocess.DEVNULL)
        subprocess.run(["rm", "-rf", directory])
    return 0


if __name__ == "__main__":
    sys.exit(main())
