"""Drives the iwd_reachd and wpasupplicant_reachd dbusmock templates:
wifictl.py ADDRESS iwd|wpa METHOD ARG...

ADDRESS is the private bus's address. Arguments are converted to the method's D-Bus signature:
integers for u, q, n, i; true/false for b; for ay, text (its UTF-8 bytes) or hex:4142ff (any
bytes); for v, TYPE:VALUE with TYPE u, i, n, q, y or s. A method's answer, if any, is printed
one item a line (AgentCalls: "Register /agent -55,-66,-77,-88", "Changed … 2").

  wifictl.py unix:path=/tmp/x/bus iwd AddStation 1 wlan0 02:00:00:00:00:10
  wifictl.py unix:path=/tmp/x/bus iwd Connect 1 Home 02:11:22:33:44:55 5180 -61
  wifictl.py unix:path=/tmp/x/bus wpa AddBSS 0 1 hex:486f6d651b 02:11:22:33:44:55 2437 -70
"""

import sys

import dbus

TEMPLATES = {
    "iwd": ("net.connman.iwd", "/", {
        "AddStation": "uss",
        "RemoveStation": "u",
        "Connect": "ussqn",
        "Roam": "usqn",
        "SetSignal": "un",
        "SetDiagnostic": "usv",
        "Disconnect": "u",
        "AgentCalls": "",
    }),
    "wpa": ("fi.w1.wpa_supplicant1", "/fi/w1/wpa_supplicant1", {
        "AddInterface": "us",
        "RemoveInterface": "u",
        "AddBSS": "uuaysqn",
        "Associate": "uui",
        "Roam": "uub",
        "SetSignal": "uun",
        "SetLinkSpeed": "ui",
        "Disconnect": "u",
    }),
}

INTEGERS = {"u": dbus.UInt32, "q": dbus.UInt16, "n": dbus.Int16, "i": dbus.Int32, "y": dbus.Byte}


def split_signature(signature):
    """The complete types of a signature made of basic types and ay."""
    types, index = [], 0
    while index < len(signature):
        if signature[index] == "a":
            types.append(signature[index:index + 2])
            index += 2
        else:
            types.append(signature[index])
            index += 1
    return types


def convert(kind, text):
    if kind in INTEGERS:
        return INTEGERS[kind](int(text, 0))
    if kind == "b":
        return dbus.Boolean(text in ("1", "true", "yes"))
    if kind == "ay":
        data = bytes.fromhex(text[4:]) if text.startswith("hex:") else text.encode("utf-8")
        return dbus.Array([dbus.Byte(b) for b in data], signature="y")
    if kind == "v":
        inner, _, value = text.partition(":")
        return convert(inner, value).__class__(convert(inner, value), variant_level=1)
    return dbus.String(text)


def main():
    address, template, method, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    name, path, signatures = TEMPLATES[template]
    signature = signatures[method]
    kinds = split_signature(signature)
    if len(kinds) != len(args):
        sys.exit(f"wifictl: {method} takes {len(kinds)} arguments ({signature}), got {len(args)}")
    values = [convert(kind, text) for kind, text in zip(kinds, args)]
    bus = dbus.bus.BusConnection(address)
    proxy = bus.get_object(name, path, introspect=False)
    answer = proxy.get_dbus_method(method, "org.freedesktop.DBus.Mock")(*values, signature=signature)
    if isinstance(answer, (list, tuple)):
        for item in answer:
            print(item)
    elif answer is not None:
        print(answer)


if __name__ == "__main__":
    main()
