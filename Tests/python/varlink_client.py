#!/usr/bin/env python3
"""An independent varlink client of reachd (the PyPI `varlink` package), driven by the Swift
integration tests. Prints one JSON object per line, flushed:

  {"info": <GetInfo reply>}
  {"status": <Status>}
  {"event": <Event>}            once per Subscribe reply, until COUNT events arrived
  {"error": "<name>", ...}      when a call fails

Usage: varlink_client.py SOCKET_PATH COUNT [--status-only] [--changes FIELD,...]
"""
import json
import sys

import varlink


def emit(obj):
    print(json.dumps(obj, sort_keys=True), flush=True)


def main():
    path, count = sys.argv[1], int(sys.argv[2])
    status_only = "--status-only" in sys.argv[3:]
    changes = None
    if "--changes" in sys.argv[3:]:
        changes = sys.argv[sys.argv.index("--changes") + 1].split(",")
    with varlink.Client(address="unix:" + path) as client:
        # Opening the interface fetches and parses its description (GetInterfaceDescription).
        with client.open("org.varlink.service") as service:
            emit({"info": service.GetInfo()})
        with client.open("io.reachd.Reachability") as remote:
            emit({"status": remote.GetStatus()["status"]})
            try:
                remote.Subscribe(statusOnly=False)
            except varlink.VarlinkError as error:
                emit({"error": error.error(), "withoutMore": True})
        with client.open("io.reachd.Reachability") as remote:
            received = 0
            arguments = {"statusOnly": status_only}
            if changes is not None:
                arguments["changes"] = changes
            for reply in remote.Subscribe(**arguments, _more=True):
                emit({"event": reply["event"]})
                received += 1
                if received >= count:
                    break
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except varlink.VarlinkError as error:
        emit({"error": error.error(), "parameters": error.parameters()})
        sys.exit(1)
