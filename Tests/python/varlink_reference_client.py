#!/usr/bin/env python3
"""Drives reachd through python's reference varlink client (the PyPI `varlink` package), whose
proxy validates every call and every reply against the interface description the daemon serves
(`filter_params`: a reply that does not match its declared type raises). Each step prints one
JSON object, flushed:

  {"step": NAME, "ok": true|false, "detail": ...}

Usage: varlink_reference_client.py SOCKET_PATH STEP...
Steps:
  description        the served description parses, and no type is named like a method
  status             GetStatus(); detail: the status (a probe must be present to be asked)
  probe              Probe(); detail: the probe
  check:HOST:PORT    Check(host, port); detail: the result
  notfound:HOST      Check(host) answers HostNotFound
  expectedmore       Subscribe() without "more" answers ExpectedMore
  badchange          Subscribe(changes: ["bogus"]) answers InvalidParameter
  nointerface        opening io.reachd.Nothing answers InterfaceNotFound
  nomethod           io.reachd.Reachability.Nothing answers MethodNotFound
  subscribe          Subscribe(): the initial event, then the events of a simulation and of its
                     end (Simulate, root); then Subscribe(after:) from the initial event replays
                     both; detail: the reasons and sequence numbers
  tooslow            a subscriber that reads nothing while 600 simulations come and go gets
                     SubscriberTooSlow as its last reply
  denied             Simulate() answers PermissionDenied (run it as someone else)
  disabled           Probe() answers ProbeDisabled (a daemon whose check is off)
"""
import json
import sys

import varlink

from varlink_check import raw_call

INTERFACE = "io.reachd.Reachability"


def emit(step, ok, detail=None):
    print(json.dumps({"step": step, "ok": bool(ok), "detail": detail}, sort_keys=True, default=str), flush=True)


def error_name(error):
    return error.error() if isinstance(error, varlink.VarlinkError) else type(error).__name__


def expect_error(step, name, call):
    try:
        reply = call()
        if hasattr(reply, "__next__"):
            reply = next(reply)
        emit(step, False, {"reply": reply})
    except varlink.VarlinkError as error:
        emit(step, error_name(error) == name, {"error": error_name(error), "parameters": error.parameters()})


def main():
    address = "unix:" + sys.argv[1]
    with varlink.Client(address=address) as client:
        for step in sys.argv[2:]:
            try:
                run(client, address, step)
            except Exception as error:  # a failed step is reported, the others still run
                emit(step, False, {"exception": f"{type(error).__name__}: {error}"})


def run(client, address, step):
    name, _, argument = step.partition(":")
    if name == "description":
        interface = client.get_interface(INTERFACE)
        text = interface.description
        types = [line.split()[1] for line in text.splitlines() if line.startswith("type ")]
        methods = [line.split()[1].split("(")[0] for line in text.splitlines() if line.startswith("method ")]
        emit(step, not set(types) & set(methods), {"types": types, "methods": methods})
        return
    if name == "nointerface":
        expect_error(step, "org.varlink.service.InterfaceNotFound", lambda: client.open("io.reachd.Nothing"))
        return
    if name == "nomethod":
        # The proxy has no undeclared method: the call goes raw, its answer through the package.
        error = varlink.VarlinkError.new(raw_call(address[len("unix:"):], INTERFACE + ".Nothing", {}))
        emit(step, error_name(error) == "org.varlink.service.MethodNotFound", {"error": error_name(error)})
        return
    with client.open(INTERFACE) as reachd:
        if name == "status":
            status = reachd.GetStatus()["status"]
            emit(step, "probe" in status, status)
        elif name == "probe":
            emit(step, True, reachd.Probe()["probe"])
        elif name == "check":
            host, _, port = argument.partition(":")
            result = reachd.Check(host=host, port=int(port)) if port else reachd.Check(host=host)
            emit(step, result["result"]["reachable"], result["result"])
        elif name == "notfound":
            expect_error(step, INTERFACE + ".HostNotFound", lambda: reachd.Check(host=argument))
        elif name == "expectedmore":
            expect_error(step, INTERFACE + ".ExpectedMore", lambda: reachd.Subscribe())
        elif name == "badchange":
            expect_error(step, "org.varlink.service.InvalidParameter", lambda: reachd.Subscribe(changes=["bogus"], _more=True))
        elif name == "denied":
            expect_error(step, INTERFACE + ".PermissionDenied", lambda: reachd.Simulate(status="wifi"))
        elif name == "disabled":
            expect_error(step, INTERFACE + ".ProbeDisabled", lambda: reachd.Probe())
        elif name == "subscribe":
            subscribe(client, address, step, reachd)
        elif name == "tooslow":
            too_slow(address, step, reachd)
        else:
            emit(step, False, {"unknown step": step})


def subscribe(client, address, step, reachd):
    events = reachd.Subscribe(_more=True)
    initial = next(events)["event"]
    seen = [(initial["sequence"], initial["reason"]["code"], initial["event"])]
    with varlink.Client(address=address) as other, other.open(INTERFACE) as simulator:
        simulator.Simulate(status="wifi", seconds=60)
        seen.append((lambda e: (e["sequence"], e["reason"]["code"], e["event"]))(next(events)["event"]))
        simulator.Simulate(reset=True)
        seen.append((lambda e: (e["sequence"], e["reason"]["code"], e["event"]))(next(events)["event"]))
    events.close()
    with varlink.Client(address=address) as again, again.open(INTERFACE) as resumed:
        replay = resumed.Subscribe(after=initial["sequence"], _more=True)
        replayed = [(lambda e: (e["sequence"], e["reason"]["code"], e["event"]))(next(replay)["event"]) for _ in range(2)]
        replay.close()
    ok = (seen[0][2] == "initial" and [s[1] for s in seen[1:]] == ["simulation", "simulation"]
          and replayed == seen[1:])
    emit(step, ok, {"live": seen, "replayed": replayed})


def too_slow(address, step, reachd):
    with varlink.Client(address=address) as slow_client, slow_client.open(INTERFACE) as slow:
        events = slow.Subscribe(_more=True)
        next(events)  # the initial event; then nothing is read while the events pile up
        for i in range(600):
            reachd.Simulate(status="wifi" if i % 2 == 0 else "ethernet", seconds=60)
        reachd.Simulate(reset=True)
        read = 0
        try:
            for _ in events:
                read += 1
            emit(step, False, {"read": read, "error": None})
        except varlink.VarlinkError as error:
            emit(step, error_name(error) == INTERFACE + ".SubscriberTooSlow" and error.parameters().get("dropped", 0) > 0,
                 {"read": read, "error": error_name(error), "parameters": error.parameters()})


if __name__ == "__main__":
    main()
