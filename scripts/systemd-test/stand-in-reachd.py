#!/usr/bin/python3
# A stand-in for reachd while the real daemon is not built yet: it does what the systemd
# harness (scripts/test-systemd.sh) checks, the way reachd must: READY=1 and STATUS= over
# $NOTIFY_SOCKET, watchdog pings, answers GetStatus on the socket systemd passes (fd 3), and
# survives SIGHUP. Not installed by `make install`.
import json, os, select, signal, socket, sys

def notify(msg):
    path = os.environ.get("NOTIFY_SOCKET")
    if not path:
        return
    if path.startswith("@"):
        path = "\0" + path[1:]
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.sendto(msg.encode(), path)
    s.close()

status = {"status": "notReachable", "reachable": False, "connectivity": "unknown"}
signal.signal(signal.SIGHUP, lambda *_: print("<6>reload requested (stand-in keeps its configuration)", file=sys.stderr, flush=True))
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))

if os.environ.get("LISTEN_PID") == str(os.getpid()) and int(os.environ.get("LISTEN_FDS", "0")) >= 1:
    listener = socket.socket(fileno=3)
else:
    print("<3>stand-in: no socket passed", file=sys.stderr, flush=True)
    sys.exit(1)

watchdog = int(os.environ.get("WATCHDOG_USEC", "0")) / 1e6 / 2 or None
notify("READY=1\nSTATUS=not reachable")
while True:
    readable, _, _ = select.select([listener], [], [], watchdog)
    if watchdog:
        notify("WATCHDOG=1")
    if not readable:
        continue
    conn, _ = listener.accept()
    data = b""
    while not data.endswith(b"\0"):
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    conn.sendall(json.dumps({"parameters": {"status": status}}).encode() + b"\0")
    conn.close()
