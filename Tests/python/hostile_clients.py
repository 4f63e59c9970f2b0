#!/usr/bin/env python3
"""Unfriendly local clients of reachd's varlink socket, for the tests of its limits.

usage: hostile_clients.py SOCKET MODE [ARGS]
  partial N BYTES      N connections, each sends BYTES bytes without a NUL; holds them until
                       stdin closes, printing "holding K" once they are sent (K still open)
  nonreading N         N connections that send calls (GetInterfaceDescription) until the socket
                       is full and never read; holds them until stdin closes ("holding K")
  checkflood N HOST    N times: connect, send Check(HOST, 80), hang up at once; prints "done"
  probeflood N [GAP]   N Probe() calls in a row on one connection, each answer read, GAP
                       seconds apart (default 0); prints "answered N"
  nested N DEPTH SECS  for SECS seconds: connect, send N GetStatus calls whose parameters nest
                       DEPTH arrays deep in one write, read the answers until N came or the
                       daemon hung up; prints "sent BYTES" after the first write, "rounds R"
                       at the end
  simulateflood N      N Simulate calls on one connection, 32 at a time, each answer read;
                       prints "denied K" (the PermissionDenied answers)
  duplicate            one Check call naming "host" twice; prints the reply or "closed"
"""
import json
import os
import resource
import socket
import sys
import time

path, mode = sys.argv[1], sys.argv[2]
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s


def call(method, parameters=None):
    message = {"method": method}
    if parameters is not None:
        message["parameters"] = parameters
    return json.dumps(message).encode() + b"\0"


def hold(sockets):
    alive = 0
    for s in sockets:
        try:
            s.setblocking(False)
            data = s.recv(1, socket.MSG_PEEK)
            if data != b"":
                alive += 1
        except BlockingIOError:
            alive += 1
        except OSError:
            pass
    print("holding %d" % alive, flush=True)
    sys.stdin.read()


if mode == "partial":
    count, size = int(sys.argv[3]), int(sys.argv[4])
    sockets = []
    chunk = b'{"method":"' + b"a" * (size - 11)
    for _ in range(count):
        try:
            s = connect()
            s.settimeout(2)
            s.sendall(chunk[:size])
            sockets.append(s)
        except OSError:
            pass
    hold(sockets)
elif mode == "nonreading":
    count = int(sys.argv[3])
    sockets = []
    message = call("org.varlink.service.GetInterfaceDescription", {"interface": "io.reachd.Reachability"})
    for _ in range(count):
        try:
            s = connect()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.setblocking(False)
            sent = 0
            # Keep sending while the daemon keeps reading; stop when the socket is full.
            while sent < 4 * 1024 * 1024:
                try:
                    sent += s.send(message * 32)
                except BlockingIOError:
                    break
            sockets.append(s)
        except OSError:
            pass
    hold(sockets)
elif mode == "checkflood":
    count, host = int(sys.argv[3]), sys.argv[4]
    for i in range(count):
        try:
            s = connect()
            s.sendall(call("io.reachd.Reachability.Check", {"host": "%d.%s" % (i, host), "port": 80}))
            s.close()
        except OSError:
            pass
    print("done", flush=True)
elif mode == "probeflood":
    count = int(sys.argv[3])
    gap = float(sys.argv[4]) if len(sys.argv) > 4 else 0
    s = connect()
    answered = 0
    buffer = b""
    for _ in range(count):
        s.sendall(call("io.reachd.Reachability.Probe"))
        while b"\0" not in buffer:
            data = s.recv(65536)
            if not data:
                break
            buffer += data
        if b"\0" in buffer:
            reply, buffer = buffer.split(b"\0", 1)
            if b'"probe"' in reply:
                answered += 1
        if gap:
            time.sleep(gap)
    print("answered %d" % answered, flush=True)
elif mode == "nested":
    count, depth, seconds = int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
    message = (b'{"method":"io.reachd.Reachability.GetStatus","parameters":{"x":' + b"[" * depth + b"]" * depth + b"}}\0") * count
    deadline = time.monotonic() + seconds
    rounds = 0
    while True:
        try:
            s = connect()
            s.settimeout(120)
            s.sendall(message)
            if rounds == 0:
                print("sent %d" % len(message), flush=True)
            answers = 0
            while answers < count:
                data = s.recv(65536)
                if not data:
                    break
                answers += data.count(b"\0")
            s.close()
        except OSError:
            pass
        rounds += 1
        if time.monotonic() >= deadline:
            break
        time.sleep(0.05)
    print("rounds %d" % rounds, flush=True)
elif mode == "simulateflood":
    count = int(sys.argv[3])
    s = connect()
    s.settimeout(60)
    message = call("io.reachd.Reachability.Simulate", {"status": "wwan2G", "seconds": 60})
    denied = 0
    buffer = b""
    sent = 0
    while sent < count:
        batch = min(32, count - sent)
        s.sendall(message * batch)
        sent += batch
        answers = 0
        while answers < batch:
            while b"\0" not in buffer:
                data = s.recv(65536)
                if not data:
                    raise SystemExit("closed after %d denied" % denied)
                buffer += data
            reply, buffer = buffer.split(b"\0", 1)
            answers += 1
            if b"PermissionDenied" in reply:
                denied += 1
    print("denied %d" % denied, flush=True)
elif mode == "duplicate":
    s = connect()
    s.settimeout(10)
    s.sendall(b'{"method":"io.reachd.Reachability.Check","parameters":{"host":"127.0.0.1","host":"10.0.0.1"}}\0')
    reply = b""
    while True:
        data = s.recv(65536)
        if not data:
            break
        reply += data
        if b"\0" in reply:
            break
    print(reply.split(b"\0")[0].decode() if reply else "closed", flush=True)
else:
    sys.exit("unknown mode " + mode)
