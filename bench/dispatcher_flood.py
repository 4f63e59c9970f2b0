#!/usr/bin/env python3
"""reachd-dispatcher under a flood of events: how many script runs a second, how many journal
lines, how much CPU. Root; a reachd in a network namespace of its own (no connectivity check,
no ModemManager), a dispatcher following it with one counting script, and a flood of reachd's
`Simulate` calls (each flips the status, so each is an event) at --rate a second for
--seconds. The last call sets a status of its own; the run is over when a script run saw it.

    bench/dispatcher_flood.py --bin .build/release                      # MinIntervalSec=1
    bench/dispatcher_flood.py --bin .build/release --interval 0         # no pacing
    bench/dispatcher_flood.py --bin .build/release --dispatcher OLD/reachd-dispatcher

Prints one JSON object: events sent, script runs, runs a second during the flood, the largest
REACHD_COALESCED, the dispatcher's log lines and CPU seconds, and whether the last state ran.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time


def call(sock, method, parameters):
    sock.sendall(json.dumps({"method": method, "parameters": parameters}).encode() + b"\0")
    data = b""
    while not data.endswith(b"\0"):
        chunk = sock.recv(65536)
        if not chunk:
            raise RuntimeError("reachd hung up")
        data += chunk
    reply = json.loads(data[:-1])
    if "error" in reply:
        raise RuntimeError(f"{method}: {reply}")
    return reply


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_for(predicate, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=".build/debug", help="directory with reachd (and reachd-dispatcher)")
    ap.add_argument("--dispatcher", help="the reachd-dispatcher to measure (default: BIN/reachd-dispatcher)")
    ap.add_argument("--interval", help="[Dispatcher] MinIntervalSec= (default: the built-in default)")
    ap.add_argument("--rate", type=float, default=200, help="events a second (default 200)")
    ap.add_argument("--seconds", type=float, default=5, help="how long the flood lasts (default 5)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("dispatcher_flood.py: needs root (a network namespace, root's scripts)")
    reachd = os.path.abspath(os.path.join(args.bin, "reachd"))
    dispatcher_bin = os.path.abspath(args.dispatcher or os.path.join(args.bin, "reachd-dispatcher"))

    work = tempfile.mkdtemp(prefix="dflood.")
    os.chmod(work, 0o755)
    netns = f"dfl{os.getpid()}"
    procs = []
    try:
        subprocess.run(["ip", "netns", "add", netns], check=True)
        with open(f"{work}/reachd.conf", "w") as f:
            f.write("[Connectivity]\nEnabled=no\n[Cellular]\nModemManager=no\n")
        with open(f"{work}/dispatcher.conf", "w") as f:
            f.write("[Targets]\nEnabled=no\n")
            if args.interval is not None:
                f.write(f"[Dispatcher]\nMinIntervalSec={args.interval}\n")
        os.mkdir(f"{work}/scripts", 0o755)
        with open(f"{work}/scripts/10-count", "w") as f:
            f.write(f"#!/bin/sh\necho \"$REACHD_COALESCED $REACHD_STATUS $REACHD_CONNECTIVITY\" >> '{work}/runs'\n")
        os.chmod(f"{work}/scripts/10-count", 0o755)
        sock_path = f"{work}/reachd.sock"
        reachd_log = open(f"{work}/reachd.log", "w")
        procs.append(subprocess.Popen(["ip", "netns", "exec", netns, reachd, "--socket", sock_path,
                                       "--config", f"{work}/reachd.conf"], stderr=reachd_log,
                                      env=dict(os.environ, STATE_DIRECTORY=work)))   # not /var/lib/reachd
        if not wait_for(lambda: os.path.exists(sock_path), 10):
            sys.exit("reachd did not come up")
        dispatcher_log = open(f"{work}/dispatcher.log", "w")
        dispatcher = subprocess.Popen([dispatcher_bin, "--socket", sock_path, "--config", f"{work}/dispatcher.conf",
                                       "--state-dir", f"{work}/state", "--script-dir", f"{work}/scripts",
                                       "--systemctl", "/bin/true"], stderr=dispatcher_log)
        procs.append(dispatcher)

        def runs():
            try:
                with open(f"{work}/runs") as f:
                    return [line.split() for line in f]
            except FileNotFoundError:
                return []
        if not wait_for(lambda: len(runs()) >= 1, 10):
            sys.exit("the dispatcher ran nothing")
        time.sleep(1.5)  # past any interval, so that the flood starts from a quiet dispatcher
        before_runs, before_cpu = len(runs()), cpu_seconds(dispatcher.pid)
        before_lines = sum(1 for _ in open(f"{work}/dispatcher.log"))

        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.connect(sock_path)
        count = int(args.rate * args.seconds)
        start = time.monotonic()
        for i in range(count):
            call(client, "io.reachd.Reachability.Simulate",
                 {"status": "wifi" if i % 2 else "ethernet", "connectivity": "limited"})
            delay = start + (i + 1) / args.rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        call(client, "io.reachd.Reachability.Simulate", {"status": "wifi", "connectivity": "portal"})
        flood = time.monotonic() - start
        last_ran = wait_for(lambda: runs() and runs()[-1][1:] == ["wifi", "portal"], 30)
        done = time.monotonic() - start
        flood_runs = runs()[before_runs:]
        lines = sum(1 for _ in open(f"{work}/dispatcher.log")) - before_lines
        result = {
            "dispatcher": dispatcher_bin,
            "minIntervalSec": args.interval if args.interval is not None else "default",
            "events": count + 1,
            "floodSeconds": round(flood, 2),
            "untilLastRunSeconds": round(done, 2),
            "scriptRuns": len(flood_runs),
            "runsPerSecond": round(len(flood_runs) / done, 1),
            "maxCoalesced": max((int(r[0]) for r in flood_runs), default=0),
            "eventsInRuns": sum(int(r[0]) for r in flood_runs),
            "dispatcherLogLines": lines,
            "dispatcherCPUSeconds": round(cpu_seconds(dispatcher.pid) - before_cpu, 2),
            "lastStateRan": bool(last_ran),
        }
        print(json.dumps(result))
    finally:
        for p in reversed(procs):
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        subprocess.run(["ip", "netns", "delete", netns], stderr=subprocess.DEVNULL)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
