#!/usr/bin/env python3
"""Calls io.reachd.Reachability.Check and checks the reply strictly against the interface
description the daemon serves, as parsed by the PyPI `varlink` package (the reply itself is read
from a raw socket, since the package's client drops null fields): every field of HostCheck, Route
and TCPCheck present (null for an absent optional), no other field, each of its declared type.
Prints one JSON object, flushed:

  {"result": <HostCheck>, "valid": true}     or   {"result": ..., "valid": false, "problem": "..."}
  {"error": "<name>", "parameters": {...}}   when the call fails

Usage: varlink_check.py SOCKET_PATH HOST [PORT]

Or, for any method, each reply checked against the method's declared output type:

  varlink_check.py SOCKET_PATH --call METHOD PARAMETERS_JSON [REPLIES]
      REPLIES > 1 calls with "more" and checks that many replies (Subscribe). One line per reply:
      {"reply": <parameters>, "valid": true|false, "problem": ...}   or   {"error": ...}
  varlink_check.py SOCKET_PATH --description FILE
      {"matches": true|false, "served": "<text>"}: the served description is FILE's text.
"""
import json
import socket
import sys

import varlink
from varlink.scanner import _Alias, _Array, _CustomType, _Dict, _Enum, _Maybe, _Object, _Struct


def problem(value, vtype, members, path):
    """The first way `value` does not match `vtype` strictly, or None."""
    if isinstance(vtype, _Maybe):
        return None if value is None else problem(value, vtype.element_type, members, path)
    if value is None:
        return f"{path}: null for a non-optional field"
    if isinstance(vtype, _CustomType):
        member = members.get(vtype.name)
        if member is None:
            return f"{path}: type {vtype.name} is not declared"
        return problem(value, member.type, members, path)
    if isinstance(vtype, _Alias):
        return problem(value, vtype.type, members, path)
    if isinstance(vtype, _Struct):
        if not isinstance(value, dict):
            return f"{path}: not an object"
        if set(value) != set(vtype.fields):
            return f"{path}: fields {sorted(value)} instead of {sorted(vtype.fields)}"
        for name, ftype in vtype.fields.items():
            found = problem(value[name], ftype, members, f"{path}.{name}")
            if found:
                return found
        return None
    if isinstance(vtype, _Enum):
        return None if value in vtype.fields else f"{path}: {value!r} not in {vtype.fields}"
    if isinstance(vtype, _Array):
        if not isinstance(value, list):
            return f"{path}: not an array"
        for i, item in enumerate(value):
            found = problem(item, vtype.element_type, members, f"{path}[{i}]")
            if found:
                return found
        return None
    if isinstance(vtype, (_Dict, _Object, set)):
        return None
    if isinstance(vtype, bool):
        return None if isinstance(value, bool) else f"{path}: not a bool"
    if isinstance(vtype, int):
        return None if isinstance(value, int) and not isinstance(value, bool) else f"{path}: not an int"
    if isinstance(vtype, float):
        return None if isinstance(value, (int, float)) and not isinstance(value, bool) else f"{path}: not a float"
    if isinstance(vtype, str):
        return None if isinstance(value, str) else f"{path}: not a string"
    return f"{path}: unknown type {vtype!r}"


def raw_call(path, method, parameters):
    """One call on a raw socket: the reply exactly as sent (the package's client drops null fields)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(path)
        s.sendall(json.dumps({"method": method, "parameters": parameters}).encode() + b"\0")
        data = b""
        while not data.endswith(b"\0"):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    return json.loads(data.rstrip(b"\0"))


def replies(path, method, parameters, count):
    """`count` replies of one call (with "more" when count > 1), each as sent."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(path)
        call = {"method": method, "parameters": parameters}
        if count > 1:
            call["more"] = True
        s.sendall(json.dumps(call).encode() + b"\0")
        data = b""
        while count > 0:
            while b"\0" not in data:
                chunk = s.recv(65536)
                if not chunk:
                    return
                data += chunk
            message, data = data.split(b"\0", 1)
            yield json.loads(message)
            count -= 1


def check_call(path, method, parameters, count):
    with varlink.Client(address="unix:" + path) as client:
        interface = client.get_interface("io.reachd.Reachability")
    name = method.rsplit(".", 1)[1]
    out_type = interface.members[name].out_type
    # One member per name: the package's own table holds every type (no type is named like a method).
    types = interface.members
    seen = 0
    for reply in replies(path, method, parameters, count):
        seen += 1
        if reply.get("error"):
            print(json.dumps({"error": reply["error"], "parameters": reply.get("parameters")}), flush=True)
            return 1
        found = problem(reply.get("parameters"), out_type, types, name)
        print(json.dumps({"reply": reply["parameters"], "valid": found is None, "problem": found}, sort_keys=True), flush=True)
    return 0 if seen == count else 1


def check_description(path, file):
    served = raw_call(path, "org.varlink.service.GetInterfaceDescription", {"interface": "io.reachd.Reachability"})
    text = served["parameters"]["description"]
    with open(file) as f:
        expected = f.read()
    # The package must parse what is served (it raises on a description it cannot read).
    varlink.Interface(text)
    print(json.dumps({"matches": text.rstrip("\n") == expected.rstrip("\n"), "served": text}), flush=True)
    return 0


def main():
    if sys.argv[2] == "--call":
        count = int(sys.argv[5]) if len(sys.argv) > 5 else 1
        return check_call(sys.argv[1], sys.argv[3], json.loads(sys.argv[4]), count)
    if sys.argv[2] == "--description":
        return check_description(sys.argv[1], sys.argv[3])
    path, host = sys.argv[1], sys.argv[2]
    parameters = {"host": host}
    if len(sys.argv) > 3:
        parameters["port"] = int(sys.argv[3])
    # The package fetches and parses the interface description (GetInterfaceDescription).
    with varlink.Client(address="unix:" + path) as client:
        interface = client.get_interface("io.reachd.Reachability")
    reply = raw_call(path, "io.reachd.Reachability.Check", parameters)
    if reply.get("error"):
        print(json.dumps({"error": reply["error"], "parameters": reply.get("parameters")}), flush=True)
        return 1
    if set(reply["parameters"]) != {"result"}:
        print(json.dumps({"valid": False, "problem": f"reply parameters {sorted(reply['parameters'])}"}), flush=True)
        return 0
    result = reply["parameters"]["result"]
    found = problem(result, _CustomType("HostCheck"), interface.members, "result")
    print(json.dumps({"result": result, "valid": found is None, "problem": found}, sort_keys=True), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
