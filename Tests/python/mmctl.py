"""Drives the modemmanager_reachd dbusmock template: mmctl.py ADDRESS METHOD ARG...

ADDRESS is the private bus's address. Arguments are converted to the method's D-Bus signature;
SetModemProperty takes NAME TYPE:VALUE with TYPE u, i, s or q (a SignalQuality (ub) of VALUE).
SetSignal takes INDEX TECHNOLOGY KEY=VALUE... (a Modem.Signal property, e.g.
`SetSignal 0 Lte rsrp=-125 rsrq=-15`; no KEY=VALUE: nothing reported). A method's answer, if
any, is printed one item a line (SignalSetupCalls INDEX: "Setup 30", "SetupThresholds …").
"""

import sys

import dbus

SIGNATURES = {
    "AddModem": "usuu",
    "RemoveModem": "u",
    "SetModemProperty": "usv",
    "SetRegistrationState": "uu",
    "AddBearer": "uusb",
    "SetBearer": "usb",
    "SetSignal": "usa{sd}",
    "SignalSetupCalls": "u",
}


def convert(kind, text):
    if kind == "u":
        return dbus.UInt32(int(text, 0))
    if kind == "b":
        return dbus.Boolean(text in ("1", "true", "yes"))
    return dbus.String(text)


def typed(text):
    kind, _, value = text.partition(":")
    if kind == "u":
        return dbus.UInt32(int(value, 0), variant_level=1)
    if kind == "i":
        return dbus.Int32(int(value, 0), variant_level=1)
    if kind == "q":
        return dbus.Struct((dbus.UInt32(int(value, 0)), dbus.Boolean(True)), signature="ub", variant_level=1)
    return dbus.String(value, variant_level=1)


def main():
    address, method, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    signature = SIGNATURES[method]
    values = []
    if method == "SetSignal":
        figures = {}
        for pair in args[2:]:
            key, _, number = pair.partition("=")
            figures[key] = float(number)
        values = [convert("u", args[0]), dbus.String(args[1]), dbus.Dictionary(figures, signature="sd")]
    else:
        for kind, text in zip(signature, args):
            values.append(typed(text) if kind == "v" else convert(kind, text))
    bus = dbus.bus.BusConnection(address)
    proxy = bus.get_object("org.freedesktop.ModemManager1", "/org/freedesktop/ModemManager1", introspect=False)
    answer = proxy.get_dbus_method(method, "org.freedesktop.DBus.Mock")(*values, signature=signature)
    if isinstance(answer, (list, tuple)):
        for item in answer:
            print(item)
    elif answer is not None:
        print(answer)


if __name__ == "__main__":
    main()
