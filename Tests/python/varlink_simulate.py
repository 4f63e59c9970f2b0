#!/usr/bin/env python3
"""Calls reachd's Simulate with the PyPI `varlink` package, for the integration tests (they run
it as other users to test who may simulate). Prints one JSON object per line, flushed:

  {"status": <Status>}                       the reply
  {"error": "<name>", "parameters": {...}}   a varlink error

Usage: varlink_simulate.py SOCKET_PATH PARAMETERS_JSON [--hold]
With --hold the connection stays open until the process is killed (whileConnected).
"""
import json
import signal
import sys

import varlink


def emit(obj):
    print(json.dumps(obj, sort_keys=True), flush=True)


def main():
    path, parameters = sys.argv[1], json.loads(sys.argv[2])
    hold = "--hold" in sys.argv[3:]
    with varlink.Client(address="unix:" + path) as client:
        with client.open("io.reachd.Reachability") as remote:
            try:
                emit({"status": remote.Simulate(**parameters)["status"]})
            except varlink.VarlinkError as error:
                emit({"error": error.error(), "parameters": error.parameters()})
                return 1
            if hold:
                while True:
                    signal.pause()
    return 0


if __name__ == "__main__":
    sys.exit(main())
