#!/usr/bin/python3
# Stand-in for `reachctl status` (see stand-in-reachd.py): one varlink GetStatus call.
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect("/run/reachd/io.reachd.Reachability")
except OSError as e:
    print(f"reachctl: reachd is not running ({e})", file=sys.stderr)
    sys.exit(69)
s.sendall(json.dumps({"method": "io.reachd.Reachability.GetStatus"}).encode() + b"\0")
data = b""
while not data.endswith(b"\0"):
    chunk = s.recv(65536)
    if not chunk:
        break
    data += chunk
print(json.loads(data.rstrip(b"\0"))["parameters"]["status"]["status"])
