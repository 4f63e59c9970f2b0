#!/usr/bin/env python3
"""Plays a hostile peer on a bus: sends a signal that looks like another service's, once
broadcast and once addressed to every other connection on the bus but that service's (a signal
addressed to a connection reaches it whatever its match rules say). Prints how many it sent.

usage: forge_signal.py BUS_ADDRESS prepare-for-sleep      logind's PrepareForSleep(true)
       forge_signal.py BUS_ADDRESS modemmanager-vanished  the bus's NameOwnerChanged, claiming
                                                          ModemManager's name lost its owner
"""
import sys

import dbus
import dbus.lowlevel

if len(sys.argv) != 3 or sys.argv[2] not in ("prepare-for-sleep", "modemmanager-vanished"):
    sys.exit(__doc__)
bus = dbus.bus.BusConnection(sys.argv[1])
me = bus.get_unique_name()
driver = dbus.Interface(bus.get_object("org.freedesktop.DBus", "/org/freedesktop/DBus"), "org.freedesktop.DBus")
service = "org.freedesktop.login1" if sys.argv[2] == "prepare-for-sleep" else "org.freedesktop.ModemManager1"
owner = driver.GetNameOwner(service)


def forged():
    if sys.argv[2] == "prepare-for-sleep":
        message = dbus.lowlevel.SignalMessage("/org/freedesktop/login1", "org.freedesktop.login1.Manager", "PrepareForSleep")
        message.append(True, signature="b")
    else:
        message = dbus.lowlevel.SignalMessage("/org/freedesktop/DBus", "org.freedesktop.DBus", "NameOwnerChanged")
        message.append(service, str(owner), "", signature="sss")
    return message


targets = [None] + [name for name in driver.ListNames() if name.startswith(":") and name not in (me, owner)]
for target in targets:
    message = forged()
    if target:
        message.set_destination(target)
    bus.send_message(message)
bus.flush()
print(len(targets))
