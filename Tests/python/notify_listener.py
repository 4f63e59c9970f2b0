#!/usr/bin/env python3
"""Stands in for systemd's notify socket in the integration tests: binds a Unix datagram socket
at PATH and prints every message it receives on one line (newlines as '|'), flushed.

Usage: notify_listener.py PATH
"""
import os
import socket
import sys

path = sys.argv[1]
sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
sock.bind(path)
os.chmod(path, 0o666)
print("ready", flush=True)
while True:
    data = sock.recv(65536)
    print(data.decode("utf-8", "replace").replace("\n", "|"), flush=True)
