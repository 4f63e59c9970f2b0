#!/usr/bin/env python3
"""Drives reachd through python's reference `varlink` package (PyPI), as any python app would:
its Client, its handler of an interface (which checks every reply against the description the
daemon serves) and its parser. On top of what the package checks (types of the declared fields;
it drops the undeclared and nulls), each reply is checked strictly against the same parsed
description: every declared field present (null for an absent optional), no other field, enum
values declared. Errors are the package's VarlinkError, their parameters checked against the
error's declared type. Prints one JSON object per line, flushed.

  varlink_conformance.py describe SOCKET FILE
      org.varlink.service GetInfo and GetInterfaceDescription of both interfaces through the
      package, each parsed with varlink.Interface, and GetInterfaceDescription of an interface
      the daemon does not have:
      {"info": {...}, "matches": <served == FILE>, "interface": NAME, "types": [...],
       "methods": [...], "errors": [...], "service": {"methods": [...], "errors": [...]},
       "unknownInterface": {"error": ..., "parameters": ...}}
  varlink_conformance.py call SOCKET METHOD PARAMETERS_JSON [--more N] [--extra-method NAME]
      One call of io.reachd.Reachability.METHOD; with --more, N replies of a "more" call. Each
      reply:  {"reply": <parameters as the package returned them>, "valid": bool, "problem": ...}
      an error: {"error": "<name>", "parameters": {...}, "valid": bool, "problem": ...}
      --extra-method declares a method the daemon does not have, so that the package sends it.
  varlink_conformance.py tooslow SOCKET EVENTS
      A subscriber that stops reading while EVENTS simulations are played on a second
      connection, then reads on: its replies, then {"error": "...SubscriberTooSlow", ...}.
  varlink_conformance.py busy SOCKET HOST CALLS
      CALLS Check(HOST) calls at once, each on its own connection: one line each.
"""
import copy
import json
import sys
import threading

import varlink
from varlink.client import SimpleClientInterfaceHandler
from varlink.scanner import _Alias, _Error, _Method

from varlink_check import problem

INTERFACE = "io.reachd.Reachability"


def emit(obj):
    print(json.dumps(obj, sort_keys=True), flush=True)


class RecordingHandler(SimpleClientInterfaceHandler):
    """The package's own handler, keeping each reply's parameters as they arrived as well, so that
    what the package's filter left out can be told."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.received = []

    def _next_varlink_message(self):
        parameters, more = super()._next_varlink_message()
        self.received.append(copy.deepcopy(parameters))
        return parameters, more


def without_nulls(value):
    """What the package's filter keeps of a reply that has only declared fields: no nulls."""
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value


def judged_reply(filtered, received, out_type, members, name):
    """A reply line: the package's value, and whether the reply as received is strictly valid
    and the package kept all of it."""
    found = problem(received, out_type, members, name)
    if found is None and without_nulls(received) != filtered:
        found = f"{name}: the package's reply {filtered} differs from what was sent"
    return {"reply": filtered, "valid": found is None, "problem": found}


def judged_error(error, interfaces):
    """An error line: its name, its parameters, and whether they match the error's declared type."""
    name = error.error()
    parameters = error.parameters() or {}
    interface_name, _, member = name.rpartition(".")
    declared = interfaces.get(interface_name)
    if declared is None or member not in declared.members:
        found = f"{name} is not declared by {interface_name}"
    else:
        found = problem(parameters, declared.members[member].type, declared.members, member)
    return {"error": name, "parameters": parameters, "valid": found is None, "problem": found}


def client_for(path):
    client = varlink.Client(address="unix:" + path)
    client.handler = RecordingHandler
    return client


def describe(path, file):
    with client_for(path) as client:
        with client.open("org.varlink.service") as service:
            info = service.GetInfo()
            text = service.GetInterfaceDescription(interface=INTERFACE)["description"]
            service_text = service.GetInterfaceDescription(interface="org.varlink.service")["description"]
            try:
                service.GetInterfaceDescription(interface="org.example.Nope")
                unknown = {"error": None}
            except varlink.VarlinkError as error:
                unknown = judged_error(error, {"org.varlink.service": varlink.Interface(service_text)})
    # The package's parser reads both as served (it raises on a description it cannot read).
    interface = varlink.Interface(text)
    service_interface = varlink.Interface(service_text)

    def names(parsed, kind):
        return [name for name, member in parsed.members.items() if kind(member)]

    is_method = lambda m: isinstance(m, _Method)
    is_error = lambda m: isinstance(m, _Error)
    is_type = lambda m: isinstance(m, _Alias)
    with open(file) as f:
        expected = f.read()
    emit({"info": info, "matches": text.rstrip("\n") == expected.rstrip("\n"), "interface": interface.name,
          "types": names(interface, is_type), "methods": names(interface, is_method), "errors": names(interface, is_error),
          "service": {"interface": service_interface.name, "methods": names(service_interface, is_method),
                      "errors": names(service_interface, is_error)},
          "unknownInterface": unknown})
    return 0


def interfaces_of(client):
    return {INTERFACE: client.get_interface(INTERFACE), "org.varlink.service": client._interfaces["org.varlink.service"]}


def call(path, method, parameters, more, extra_method):
    with client_for(path) as client:
        interfaces = interfaces_of(client)
        interface = interfaces[INTERFACE]
        if extra_method:
            interface = varlink.Interface(interface.get_description() + f"\n\nmethod {extra_method}() -> ()\n")
            client.add_interface(interface)
        members = interface.members
        out_type = members[method].out_type
        with client.open(INTERFACE) as remote:
            try:
                if more:
                    seen = 0
                    for reply in getattr(remote, method)(**parameters, _more=True):
                        emit(judged_reply(reply, remote.received[-1], out_type, members, method))
                        seen += 1
                        if seen >= more:
                            break
                else:
                    reply = getattr(remote, method)(**parameters)
                    emit(judged_reply(reply, remote.received[-1], out_type, members, method))
            except varlink.VarlinkError as error:
                emit(judged_error(error, interfaces))
                return 1
    return 0


def too_slow(path, events):
    with client_for(path) as client:
        interfaces = interfaces_of(client)
        members = interfaces[INTERFACE].members
        out_type = members["Subscribe"].out_type
        with client.open(INTERFACE) as subscriber, client.open(INTERFACE) as player:
            stream = subscriber.Subscribe(_more=True)
            emit(judged_reply(next(stream), subscriber.received[-1], out_type, members, "Subscribe"))
            # The subscriber reads nothing while the events pile up in its queue.
            for i in range(events):
                player.Simulate(status="wifi" if i % 2 == 0 else "ethernet", seconds=60)
            player.Simulate(reset=True)
            try:
                for reply in stream:
                    emit(judged_reply(reply, subscriber.received[-1], out_type, members, "Subscribe"))
                emit({"error": None, "ended": "without an error"})
            except varlink.VarlinkError as error:
                emit(judged_error(error, interfaces))
    return 0


def busy(path, host, calls):
    results = []
    lock = threading.Lock()

    def one():
        with client_for(path) as client:
            interfaces = interfaces_of(client)
            members = interfaces[INTERFACE].members
            with client.open(INTERFACE) as remote:
                try:
                    reply = remote.Check(host=host)
                    line = judged_reply(reply, remote.received[-1], members["Check"].out_type, members, "Check")
                except varlink.VarlinkError as error:
                    line = judged_error(error, interfaces)
        with lock:
            results.append(line)

    threads = [threading.Thread(target=one) for _ in range(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for line in results:
        emit(line)
    return 0


def main():
    command, path = sys.argv[1], sys.argv[2]
    if command == "describe":
        return describe(path, sys.argv[3])
    if command == "call":
        rest = sys.argv[5:]
        more = int(rest[rest.index("--more") + 1]) if "--more" in rest else 0
        extra = rest[rest.index("--extra-method") + 1] if "--extra-method" in rest else None
        return call(path, sys.argv[3], json.loads(sys.argv[4]), more, extra)
    if command == "tooslow":
        return too_slow(path, int(sys.argv[3]))
    if command == "busy":
        return busy(path, sys.argv[3], int(sys.argv[4]))
    print(f"unknown command {command}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
