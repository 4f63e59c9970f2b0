#!/usr/bin/python3
"""A GLib app for the GIO module's tests and benchmark: python3-gi (Debian's, not the venv's),
g_network_monitor_get_default() and a main loop. Prints one JSON object per line, flushed:

  {"event": "ready", "type": "GNetworkMonitorReachd", "getDefaultMs": 3.1, <state>}
  {"event": "notify", "property": "connectivity", <state>}      a property notification
  {"event": "changed", "argument": true, <state>}               network-changed
  {"event": "reach", "host": H, "mode": "sync"|"async", "ok": bool, "error": {...}|null}
  {"event": "reachStarted", "ticks": N}  /  {"event": "reachDone", "ticks": N, ...}   (SIGUSR1)
  {"event": "state", <state>}                                                           (SIGUSR2)
  {"event": "exit", <state>}                                                            (SIGTERM)

<state> is "available", "metered", "connectivity" (local, limited, portal, full) and "ticks",
the count of a 10 ms timeout source so far, with "maxGapMs", the longest time between two of
its ticks: how long the main loop was held, "gapsOver50Ms", and "maxBusyGapMs", the most CPU
time the process spent between two ticks (held by work, not by other processes);
"maxDrawGapMs", the longest gap of a 16 ms timer at GTK's drawing priority (HIGH_IDLE + 20,
which any source at the default priority that is always ready would starve); "iterations", the main-loop iterations so far;
"rssKiB" and "peakRssKiB" (VmRSS, VmHWM); "cpuSeconds", the process's CPU time; "monotonic" is
CLOCK_MONOTONIC when it was printed (bench/gio.py compares it with its own). "reach" and
"reachDone" carry "ms", how long the call took.

With --count-signals the signals are counted instead of printed (for floods): <state> then
also has "changed" and "notifies" (how many so far), "lastChanged" (the state network-changed
last announced: available, metered, connectivity), and "changedInOneIteration", the most
network-changed signals emitted in one main-loop iteration.

Every line also says in which "thread" it was printed: "MainThread", or with --in-thread
"monitor", a thread that creates the monitor with a main context of its own as its
thread-default and runs that (the signals must come there, not on the main thread's).

Usage: gio_monitor.py [--reach HOST[:PORT]]... [--reach-mode both|sync|async] [--reach-on-usr1 HOST[:PORT]]
                     [--exit-after-ready] [--in-thread] [--count-signals]
The module comes from GIO_EXTRA_MODULES and reachd's socket from REACHD_SOCKET, as for any app.
"""
import argparse
import json
import signal
import threading
import time

import gi

gi.require_version("Gio", "2.0")
gi.require_version("GLib", "2.0")
from gi.repository import Gio, GLib  # noqa: E402

CONNECTIVITY = {
    Gio.NetworkConnectivity.LOCAL: "local",
    Gio.NetworkConnectivity.LIMITED: "limited",
    Gio.NetworkConnectivity.PORTAL: "portal",
    Gio.NetworkConnectivity.FULL: "full",
}


class Ticker:
    """A timeout source (10 ms at the default priority): counts its ticks, the longest gap
    between two, how many gaps were over 50 ms, and the most CPU time the process spent between
    two ticks (the loop held by work, not by a busy machine that ran something else)."""

    def __init__(self, period_ms=10, priority=GLib.PRIORITY_DEFAULT):
        self.count = 0
        self.max_gap = 0.0
        self.max_busy = 0.0
        self.long_gaps = 0
        self.last = None
        self.last_cpu = None
        GLib.timeout_add(period_ms, self.tick, priority=priority)

    def tick(self):
        """Gaps count from the first tick: before it the app starts (imports, get_default(), a
        synchronous can_reach), which is not the main loop being held."""
        now, cpu = time.monotonic(), time.process_time()
        if self.last is not None:
            self.max_gap = max(self.max_gap, now - self.last)
            self.max_busy = max(self.max_busy, cpu - self.last_cpu)
            if now - self.last > 0.05:
                self.long_gaps += 1
        self.last, self.last_cpu = now, cpu
        self.count += 1
        return GLib.SOURCE_CONTINUE


class Iterations(GLib.Source):
    """Counts main-loop iterations: every iteration prepares it (it comes first, at high
    priority) and it is never ready."""

    def __init__(self):
        super().__init__()
        self.count = 0
        self.set_priority(GLib.PRIORITY_HIGH)
        self.attach(None)

    def prepare(self):
        self.count += 1
        return False, -1

    def check(self):
        return False

    def dispatch(self, callback, args):
        return GLib.SOURCE_CONTINUE


class SignalCounter:
    """--count-signals: network-changed and notify counted, not printed."""

    def __init__(self, iterations):
        self.iterations = iterations
        self.changed = 0
        self.notifies = 0
        self.last = None
        self.last_iteration = -1
        self.in_iteration = 0
        self.most_in_iteration = 0

    def on_changed(self, monitor, available):
        self.changed += 1
        if self.iterations.count == self.last_iteration:
            self.in_iteration += 1
        else:
            self.last_iteration, self.in_iteration = self.iterations.count, 1
        self.most_in_iteration = max(self.most_in_iteration, self.in_iteration)
        self.last = {"available": available, "metered": monitor.get_network_metered(),
                     "connectivity": CONNECTIVITY.get(monitor.get_connectivity(), str(monitor.get_connectivity()))}

    def on_notify(self, _monitor, _pspec):
        self.notifies += 1

    def fields(self):
        return {"changed": self.changed, "notifies": self.notifies, "lastChanged": self.last,
                "changedInOneIteration": self.most_in_iteration}


def memory():
    fields = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0])
    return {"rssKiB": fields.get("VmRSS"), "peakRssKiB": fields.get("VmHWM")}


def emit(**fields):
    print(json.dumps(fields, sort_keys=True), flush=True)


def error_fields(error):
    if error is None:
        return None
    return {"domain": error.domain, "code": error.code, "message": error.message}


def connectable(spec):
    host, _, port = spec.rpartition(":") if spec.count(":") == 1 else (spec, "", "")
    return Gio.NetworkAddress.new(host, int(port) if port else 0), host


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reach", action="append", default=[])
    parser.add_argument("--reach-on-usr1")
    parser.add_argument("--exit-after-ready", action="store_true")
    parser.add_argument("--in-thread", action="store_true")
    parser.add_argument("--reach-mode", choices=["both", "sync", "async"], default="both")
    parser.add_argument("--count-signals", action="store_true")
    args = parser.parse_args()
    # A child of a test thread may inherit a blocked signal mask; the handlers below need them.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1, signal.SIGUSR2, signal.SIGTERM})

    ticker = Ticker()
    # As GTK's frame clock draws: every 16 ms, below the default priority.
    drawer = Ticker(16, GLib.PRIORITY_HIGH_IDLE + 20)
    iterations = Iterations()
    counter = SignalCounter(iterations) if args.count_signals else None
    created = {}

    def state(**extra):
        monitor = created["monitor"]
        fields = {
            "available": monitor.get_network_available(),
            "metered": monitor.get_network_metered(),
            "connectivity": CONNECTIVITY.get(monitor.get_connectivity(), str(monitor.get_connectivity())),
            "ticks": ticker.count,
            "maxGapMs": round(ticker.max_gap * 1000, 1),
            "gapsOver50Ms": ticker.long_gaps,
            "maxBusyGapMs": round(ticker.max_busy * 1000, 1),
            "maxDrawGapMs": round(drawer.max_gap * 1000, 1),
            "iterations": iterations.count,
            "cpuSeconds": round(time.process_time(), 3),
            "monotonic": time.monotonic(),
            "thread": threading.current_thread().name,
        }
        fields.update(memory())
        if counter is not None:
            fields.update(counter.fields())
        fields.update(extra)
        return fields

    def create():
        started = time.monotonic()
        created["monitor"] = Gio.NetworkMonitor.get_default()
        created["ms"] = (time.monotonic() - started) * 1000

    if args.in_thread:
        context = GLib.MainContext.new()
        made = threading.Event()

        def run_monitor_thread():
            context.push_thread_default()
            create()
            # Connected here: handlers run where the module emits, and say so.
            created["monitor"].connect("notify", lambda _m, pspec: emit(**state(event="notify", property=pspec.name)))
            created["monitor"].connect("network-changed", lambda _m, available: emit(**state(event="changed", argument=available)))
            made.set()
            GLib.MainLoop.new(context, False).run()

        threading.Thread(target=run_monitor_thread, name="monitor", daemon=True).start()
        made.wait()
    else:
        create()
    monitor = created["monitor"]
    get_default_ms = created["ms"]

    if args.exit_after_ready:
        emit(**state(event="ready", type=type(monitor).__name__, getDefaultMs=round(get_default_ms, 2)))
        return 0

    if counter is not None:
        monitor.connect("notify", counter.on_notify)
        monitor.connect("network-changed", counter.on_changed)
    elif not args.in_thread:
        monitor.connect("notify", lambda _m, pspec: emit(**state(event="notify", property=pspec.name)))
        monitor.connect("network-changed", lambda _m, available: emit(**state(event="changed", argument=available)))
    loop = GLib.MainLoop()

    def on_usr1():
        address, host = connectable(args.reach_on_usr1)
        started = time.monotonic()

        def done(m, result):
            try:
                ok, error = m.can_reach_finish(result), None
            except GLib.Error as e:
                ok, error = False, e
            emit(**state(event="reachDone", host=host, ok=ok, error=error_fields(error),
                         ms=round((time.monotonic() - started) * 1000, 1)))

        emit(**state(event="reachStarted", host=host))
        monitor.can_reach_async(address, None, done)
        return GLib.SOURCE_CONTINUE

    def on_usr2():
        emit(**state(event="state"))
        return GLib.SOURCE_CONTINUE

    def on_term():
        emit(**state(event="exit"))
        loop.quit()
        return GLib.SOURCE_REMOVE

    # The handlers before "ready": a test signals the app once it has read that line.
    if args.reach_on_usr1:
        GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR1, on_usr1)
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR2, on_usr2)
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, on_term)
    emit(**state(event="ready", type=type(monitor).__name__, getDefaultMs=round(get_default_ms, 2)))

    for spec in args.reach:
        address, host = connectable(spec)
        if args.reach_mode in ("both", "sync"):
            started = time.monotonic()
            try:
                ok, error = monitor.can_reach(address, None), None
            except GLib.Error as e:
                ok, error = False, e
            emit(event="reach", host=host, mode="sync", ok=ok, error=error_fields(error),
                 ms=round((time.monotonic() - started) * 1000, 1))
        if args.reach_mode in ("both", "async"):
            def done(m, result, host=host, started=time.monotonic()):
                try:
                    ok, error = m.can_reach_finish(result), None
                except GLib.Error as e:
                    ok, error = False, e
                emit(event="reach", host=host, mode="async", ok=ok, error=error_fields(error),
                     ms=round((time.monotonic() - started) * 1000, 1))

            monitor.can_reach_async(address, None, done)

    loop.run()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
