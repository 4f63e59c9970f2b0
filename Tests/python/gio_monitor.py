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
its ticks: how long the main loop was held; "monotonic" is CLOCK_MONOTONIC when it was printed
(bench/gio.py compares it with its own).

Every line also says in which "thread" it was printed: "MainThread", or with --in-thread
"monitor", a thread that creates the monitor with a main context of its own as its
thread-default and runs that (the signals must come there, not on the main thread's).

Usage: gio_monitor.py [--reach HOST[:PORT]]... [--reach-on-usr1 HOST[:PORT]] [--exit-after-ready] [--in-thread]
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
    """A 10 ms timeout source: counts its ticks and the longest gap between two."""

    def __init__(self):
        self.count = 0
        self.max_gap = 0.0
        self.last = time.monotonic()
        GLib.timeout_add(10, self.tick)

    def tick(self):
        now = time.monotonic()
        self.max_gap = max(self.max_gap, now - self.last)
        self.last = now
        self.count += 1
        return GLib.SOURCE_CONTINUE


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
    args = parser.parse_args()
    # A child of a test thread may inherit a blocked signal mask; the handlers below need them.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1, signal.SIGUSR2, signal.SIGTERM})

    ticker = Ticker()
    created = {}

    def state(**extra):
        monitor = created["monitor"]
        fields = {
            "available": monitor.get_network_available(),
            "metered": monitor.get_network_metered(),
            "connectivity": CONNECTIVITY.get(monitor.get_connectivity(), str(monitor.get_connectivity())),
            "ticks": ticker.count,
            "maxGapMs": round(ticker.max_gap * 1000, 1),
            "monotonic": time.monotonic(),
            "thread": threading.current_thread().name,
        }
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

    if not args.in_thread:
        monitor.connect("notify", lambda _m, pspec: emit(**state(event="notify", property=pspec.name)))
        monitor.connect("network-changed", lambda _m, available: emit(**state(event="changed", argument=available)))
    loop = GLib.MainLoop()

    def on_usr1():
        address, host = connectable(args.reach_on_usr1)

        def done(m, result):
            try:
                ok, error = m.can_reach_finish(result), None
            except GLib.Error as e:
                ok, error = False, e
            emit(**state(event="reachDone", host=host, ok=ok, error=error_fields(error)))

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
        try:
            ok, error = monitor.can_reach(address, None), None
        except GLib.Error as e:
            ok, error = False, e
        emit(event="reach", host=host, mode="sync", ok=ok, error=error_fields(error))

        def done(m, result, host=host):
            try:
                ok, error = m.can_reach_finish(result), None
            except GLib.Error as e:
                ok, error = False, e
            emit(event="reach", host=host, mode="async", ok=ok, error=error_fields(error))

        monitor.can_reach_async(address, None, done)

    loop.run()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
