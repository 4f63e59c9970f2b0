#!/usr/bin/env python3
"""A hostile reachd for the GIO module's tests (GIOHostileServerTests) and bench/gio.py: it
listens on SOCKET_PATH like reachd and answers as MODE says. Each connection is served by a
thread of its own. Prints one JSON object per line, flushed, with "monotonic" (CLOCK_MONOTONIC):

  {"ready": true}                          listening
  {"accepted": N}                          connection N (from 1) accepted
  {"call": METHOD, "connection": N}        a complete call read
  {"sent": BYTES, "connection": N, "why": ...}   a connection's answer ended (peer gone, or done)
  {"flooded": EVENTS, "seconds": S}        flood: the flood is over, the final event sent
  {"phase": NAME}                          cycle: a new phase began

Modes (the good state is: reachable over eth0, connectivity full, not metered):
  good           Subscribe: the good initial event; Check: reachable
  deep-initial   Subscribe is answered with 100,000 "[" (and a NUL)
  deep-later     connection 1: the good initial event, 0.3 s later 100,000 "{\"a\":";
                 connection 2: 100,000 "[" as the first reply; then: initial with portal
  deep-check     Subscribe: the good initial event; Check: 100,000 "["
  huge           connection 1: the good initial event, then 100 MB without a NUL;
                 then: initial with portal
  huge-check     Subscribe: good; Check: 100 MB without a NUL
  trickle-check  Subscribe: good; Check: one byte of a never-ending answer every 2 s
  flood          Subscribe: good; after --delay s, events alternating connectivity full/portal
                 and metered as fast as the socket takes them (or --rate a second) for
                 --seconds s, then one final event (limited, metered); then silence
  hangup         every connection: the good initial event, then a hang-up
  big            Subscribe: good; after --delay s, valid events of almost 1 MiB (the module's
                 limit; a Status with 4,000 interfaces) alternating full/portal for --seconds s,
                 then the final event (limited, metered)
  stall          Subscribe: the good initial event; after --delay s, an event whose primary has a
                 data stall (connectivity still full); after --delay s more, the good state again
  cycle          the first --seconds s each connection fails in another way (the good initial
                 event then a hang-up; a hang-up before answering; garbage; 100,000 "[";
                 an error reply); then for --gap s there is no socket at all; then every
                 connection gets initial with portal and stays open

Usage: hostile_reachd.py SOCKET_PATH MODE [--seconds S] [--delay S] [--gap S] [--rate EVENTS]
"""
import argparse
import json
import os
import socket
import sys
import threading
import time

LOCK = threading.Lock()
DEEP_ARRAY = b"[" * 100_000
DEEP_OBJECT = b'{"a":' * 100_000
HUGE_BYTES = 100 * 1024 * 1024


def emit(**fields):
    fields["monotonic"] = time.monotonic()
    with LOCK:
        print(json.dumps(fields, sort_keys=True), flush=True)


def status(connectivity="full", metered=False, reachable=True):
    return {
        "status": "ethernet", "reachable": reachable, "connectivity": connectivity, "expensive": metered,
        "primary": {"name": "eth0", "index": 2, "kind": "ethernet", "up": True, "carrier": True,
                    "operstate": "up", "addresses": ["10.77.0.2/24"], "metered": False},
        "vpn": None, "cellular": None, "ipv4": True, "ipv6": False, "gateways": ["10.77.0.1"],
        "flags": ["reachable"], "interfaces": [], "probe": None, "since": "2026-12-04T00:00:00Z",
    }


def stalled(current):
    """`current` with a data stall on its primary (Interface.stall), as reachd sends it."""
    current["primary"]["stall"] = {"failRate": 0.96, "method": "tcp", "periodMs": 10000, "sentSinceReceive": 48,
                                   "since": "2026-12-04T00:00:00.000Z"}
    return current


def event(sequence, current, kind="reachabilityChanged"):
    reply = {"parameters": {"event": {
        "sequence": sequence, "timestamp": "2026-12-04T00:00:00Z", "event": kind,
        "reason": {"code": "initial" if kind == "initial" else "probeResult", "interface": None, "detail": None},
        "previous": None, "current": current}}, "continues": True}
    return json.dumps(reply).encode() + b"\0"


GOOD = event(41, status(), "initial")
PORTAL = event(42, status("portal"), "initial")
CHECK_REACHABLE = json.dumps({"parameters": {"result": {
    "host": "10.1.2.3", "addresses": ["10.1.2.3"], "reachable": True, "status": "ethernet",
    "flags": ["reachable"], "routes": [], "tcp": None}}}).encode() + b"\0"


class Connection:
    def __init__(self, sock, number):
        self.sock = sock
        self.number = number
        self.buffer = b""
        self.sent = 0

    def next_call(self):
        """The next call's method, or None when the peer closed."""
        while b"\0" not in self.buffer:
            data = self.sock.recv(65536)
            if not data:
                return None
            self.buffer += data
        message, _, self.buffer = self.buffer.partition(b"\0")
        method = json.loads(message).get("method")
        emit(call=method, connection=self.number)
        return method

    def send(self, data):
        self.sock.sendall(data)
        self.sent += len(data)

    def send_huge(self):
        chunk = b"x" * 65536
        while self.sent < HUGE_BYTES:
            self.send(chunk)

    def hold(self):
        """Reads (and drops) whatever comes until the peer closes."""
        while self.sock.recv(65536):
            pass


def flood(conn, seconds, rate):
    """As fast as the socket takes them, or `rate` events a second in batches every 10 ms."""
    size = 1000 if rate is None else max(1, rate // 100)
    batch = b"".join(event(1000 + i, status("portal" if i % 2 else "full", metered=bool(i % 4 >= 2)))
                     for i in range(size))
    started = time.monotonic()
    events = 0
    while time.monotonic() - started < seconds:
        conn.send(batch)
        events += size
        if rate is not None:
            time.sleep(max(0.0, started + events / rate - time.monotonic()))
    conn.send(event(999_999, status("limited", metered=True)))
    emit(flooded=events + 1, seconds=round(time.monotonic() - started, 3))


def big_flood(conn, seconds):
    """Events just under the module's 1 MiB limit, as fast as the socket takes them."""
    interfaces = [{"name": f"veth{i}", "index": i, "kind": "ethernet", "up": True, "carrier": True,
                   "operstate": "up", "addresses": [f"10.{i // 256 % 256}.{i % 256}.1/24"], "metered": False}
                  for i in range(4000)]
    events = []
    for i, connectivity in enumerate(("full", "portal")):
        current = status(connectivity)
        current["interfaces"] = interfaces
        message = event(2000 + i, current)
        while len(message) > 1024 * 1024:
            current["interfaces"] = current["interfaces"][:-50]
            message = event(2000 + i, current)
        events.append(message)
    started = time.monotonic()
    count = 0
    while time.monotonic() - started < seconds:
        conn.send(events[count % 2])
        count += 1
    conn.send(event(999_999, status("limited", metered=True)))
    emit(flooded=count + 1, seconds=round(time.monotonic() - started, 3), bytes=len(events[0]))


def serve(mode, conn, args, phase):
    """One connection, as the mode says. False: hang up now."""
    first = conn.number == 1
    if mode == "hangup":
        conn.next_call()
        conn.send(GOOD)
        return False
    if mode == "cycle" and phase() == "fail":
        kind = (conn.number - 1) % 5
        if kind == 0:
            conn.next_call()
            conn.send(GOOD)
        elif kind == 1:
            conn.next_call()
        elif kind == 2:
            conn.next_call()
            conn.send(b"this is not JSON\0")
        elif kind == 3:
            conn.next_call()
            conn.send(DEEP_ARRAY + b"\0")
        else:
            conn.next_call()
            conn.send(json.dumps({"error": "io.reachd.Reachability.ExpectedMore", "parameters": {}}).encode() + b"\0")
        return False
    while True:
        method = conn.next_call()
        if method is None:
            return True
        if method.endswith(".Subscribe"):
            if mode == "cycle":
                conn.send(PORTAL)
            elif mode == "deep-initial":
                conn.send(DEEP_ARRAY + b"\0")
            elif mode == "deep-later":
                if first:
                    conn.send(GOOD)
                    time.sleep(0.3)
                    conn.send(DEEP_OBJECT + b"\0")
                elif conn.number == 2:
                    conn.send(DEEP_ARRAY + b"\0")
                else:
                    conn.send(PORTAL)
            elif mode == "huge":
                if first:
                    conn.send(GOOD)
                    time.sleep(0.3)
                    conn.send_huge()
                else:
                    conn.send(PORTAL)
            elif mode == "flood":
                conn.send(GOOD)
                time.sleep(args.delay)
                flood(conn, args.seconds, args.rate)
            elif mode == "big":
                conn.send(GOOD)
                time.sleep(args.delay)
                big_flood(conn, args.seconds)
            elif mode == "stall":
                conn.send(GOOD)
                time.sleep(args.delay)
                conn.send(event(42, stalled(status())))
                time.sleep(args.delay)
                conn.send(event(43, status()))
            else:
                conn.send(GOOD)
        elif method.endswith(".Check"):
            if mode == "deep-check":
                conn.send(DEEP_ARRAY + b"\0")
            elif mode == "huge-check":
                conn.send_huge()
            elif mode == "trickle-check":
                for byte in b'{"parameters": {"result": {"host": "' + b"a" * 10_000:
                    conn.send(bytes([byte]))
                    time.sleep(2)
            else:
                conn.send(CHECK_REACHABLE)


def handle(mode, sock, number, args, phase):
    conn = Connection(sock, number)
    why = "done"
    try:
        if serve(mode, conn, args, phase):
            conn.hold()
            why = "closed"
    except OSError as error:
        why = error.strerror or str(error)
    finally:
        emit(sent=conn.sent, connection=number, why=why)
        sock.close()


def listen(path):
    if os.path.exists(path):
        os.unlink(path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    os.chmod(path, 0o666)   # as reachd's: any user may connect (the set-uid test runs as nobody)
    server.listen(64)
    return server


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("path")
    parser.add_argument("mode", choices=["good", "deep-initial", "deep-later", "deep-check", "huge", "huge-check",
                                         "trickle-check", "flood", "big", "hangup", "cycle", "stall"])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--delay", type=float, default=0.5)
    parser.add_argument("--gap", type=float, default=3.0)
    parser.add_argument("--rate", type=int, default=None)
    args = parser.parse_args()

    started = time.monotonic()

    def phase():
        if args.mode != "cycle":
            return "serve"
        elapsed = time.monotonic() - started
        if elapsed < args.seconds:
            return "fail"
        if elapsed < args.seconds + args.gap:
            return "gap"
        return "serve"

    server = listen(args.path)
    emit(ready=True)
    accepted = 0
    announced = "fail" if args.mode == "cycle" else "serve"
    while True:
        if args.mode == "cycle" and phase() != announced:
            announced = phase()
            emit(phase=announced)
            if announced == "gap":
                server.close()
                os.unlink(args.path)
                time.sleep(args.gap)
                server = listen(args.path)
                announced = "serve"
                emit(phase=announced)
        server.settimeout(0.05 if args.mode == "cycle" else None)
        try:
            sock, _ = server.accept()
        except socket.timeout:
            continue
        sock.settimeout(None)
        accepted += 1
        emit(accepted=accepted)
        threading.Thread(target=handle, args=(args.mode, sock, accepted, args, phase), daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())
