#!/usr/bin/python3
"""A client of the desktop portal's NetworkMonitor on a given bus, for the GIO module's tests:
waits until org.freedesktop.portal.Desktop has an owner, prints its GetStatus, then after every
`changed` signal its GetStatus again. One JSON object per line, flushed:

  {"event": "status", "available": true, "metered": false, "connectivity": 4}
  {"event": "changed", "available": ..., "metered": ..., "connectivity": ...}

Usage: portal_client.py BUS_ADDRESS
"""
import json
import sys

import gi

gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib  # noqa: E402

NAME = "org.freedesktop.portal.Desktop"
PATH = "/org/freedesktop/portal/desktop"
INTERFACE = "org.freedesktop.portal.NetworkMonitor"


def main():
    flags = Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION
    bus = Gio.DBusConnection.new_for_address_sync(sys.argv[1], flags, None, None)
    loop = GLib.MainLoop()

    def print_status(event):
        reply = bus.call_sync(NAME, PATH, INTERFACE, "GetStatus", None, GLib.VariantType("(a{sv})"),
                              Gio.DBusCallFlags.NONE, 10000, None)
        status = reply.unpack()[0]
        print(json.dumps(dict(event=event, **status), sort_keys=True), flush=True)

    bus.signal_subscribe(NAME, INTERFACE, "changed", PATH, None, Gio.DBusSignalFlags.NONE,
                         lambda *_: print_status("changed"))
    Gio.bus_watch_name_on_connection(bus, NAME, Gio.BusNameWatcherFlags.NONE,
                                     lambda *_: print_status("status"), None)
    loop.run()


if __name__ == "__main__":
    sys.exit(main())
