#!/usr/bin/env python3
"""A reachd that accepts connections and then hangs, for the GIO module's tests: it listens on
SOCKET_PATH, reads calls, and answers none of them — or, with --initial-only, only a Subscribe's
first reply (an `initial` event: reachable over eth0, connectivity full), then nothing more.
Prints one JSON object per line, flushed: {"ready": true} once listening, {"accepted": N} per
connection, {"call": METHOD, "parameters": {...}} per complete call.

Usage: fake_reachd.py SOCKET_PATH [--initial-only]
"""
import json
import os
import selectors
import socket
import sys

STATUS = {
    "status": "ethernet", "reachable": True, "connectivity": "full", "expensive": False,
    "primary": {"name": "eth0", "index": 2, "kind": "ethernet", "up": True, "carrier": True,
                "operstate": "up", "addresses": ["10.77.0.2/24"], "metered": False},
    "ipv4": True, "ipv6": False, "gateways": ["10.77.0.1"], "flags": [], "interfaces": [],
    "since": "2026-12-04T00:00:00Z", "simulated": False,
}
INITIAL = {"parameters": {"event": {
    "sequence": 41, "timestamp": "2026-12-04T00:00:00Z", "event": "initial",
    "reason": {"code": "initial"}, "current": STATUS, "changes": []}}, "continues": True}


def emit(obj):
    print(json.dumps(obj, sort_keys=True), flush=True)


def main():
    path = sys.argv[1]
    initial_only = "--initial-only" in sys.argv[2:]
    if os.path.exists(path):
        os.unlink(path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(16)
    selector = selectors.DefaultSelector()
    selector.register(server, selectors.EVENT_READ)
    buffers = {}
    accepted = 0
    emit({"ready": True})
    while True:
        for key, _ in selector.select():
            if key.fileobj is server:
                connection, _ = server.accept()
                accepted += 1
                buffers[connection] = b""
                selector.register(connection, selectors.EVENT_READ)
                emit({"accepted": accepted})
                continue
            connection = key.fileobj
            data = connection.recv(65536)
            if not data:
                selector.unregister(connection)
                del buffers[connection]
                connection.close()
                continue
            buffers[connection] += data
            while b"\0" in buffers[connection]:
                message, _, buffers[connection] = buffers[connection].partition(b"\0")
                call = json.loads(message)
                method = call.get("method")
                emit({"call": method, "parameters": call.get("parameters", {})})
                if initial_only and method == "io.reachd.Reachability.Subscribe":
                    connection.sendall(json.dumps(INITIAL).encode() + b"\0")


if __name__ == "__main__":
    sys.exit(main())
